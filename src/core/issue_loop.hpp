// The one issue loop every generator runs (snowflake(), its blocks, sno(), uuidv7(), ulid()):
// read the clock, check the lease (lease mode), let the kind take its step, check the lease
// again after a value was issued, and otherwise wait for what the step lacked. The lease
// guarantee (lease.hpp) rests on this loop; each kind passes only what is its own: its origin
// and its step, which takes the value (a compare-and-swap on its stream's word).
//
// The environment (Env) is the server's in the glue and a fake one in the unit tests:
//   LeaseSlot *lease()                    the lease read and checked, nullptr in config mode
//   bool read_clock(ClockReading *)       false after it reported a clock step: read again
//   uint64_t reserved_unix_ms()           the durable reservation (UINT64_MAX: none)
//   void await_lease()                    waits for an open lease, or raises why there is none
//   void await_cover(uint64_t unix_ms)    lease mode: the reservation and the mark exceed it
//   void await_reservation(uint64_t)      config mode: the reservation exceeds it
//   void wait_for_clock(uint64_t ms)      the step is at its lead bound: let the clock move
//   void wait_in_line(uint64_t ms)        a block ahead in line has the shards for now
//   void after_issue(uint64_t high_unix_ms, uint64_t now_unix_ms)
// The kind (Kind):
//   uint64_t origin_unix_ms() const       no value before this time: its layout's start
//   [[noreturn]] void raise_before_origin(uint64_t now_unix_ms)
//   IssueStep step(const IssueInput &)    takes the value, or says what it lacks
//   [[noreturn]] void raise_exhausted(const IssueStep &)   the layout's end
// Nothing here may hold an object with a destructor: the Env and the Kind raise ERRORs (a
// longjmp) from inside the loop.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"
#include "core/lease.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

struct ClockReading {
  uint64_t unix_ms;  // the IDs' clock (never backwards)
  int64_t mono_ns;   // the monotonic reading it came from: the lease's deadline is checked on it
};

// What a kind's step sees on one try.
struct IssueInput {
  uint64_t now_unix_ms;
  // Every value issued must stay below this Unix millisecond: the reservation, and in lease
  // mode the lower of it and the lease's mark.
  uint64_t limit_unix_ms;
  uint64_t lease_word;  // lease mode: the range held (never 0 here); config mode: 0
};

struct IssueStep {
  Step step;
  // kIssued: the kind's own (its new state word, say); kWait: milliseconds to let the clock
  // move; kReserve: the Unix millisecond the reservation (and mark) must exceed; kExhausted:
  // the kind's own detail for its message.
  uint64_t value;
  uint64_t high_unix_ms;  // kIssued: the latest Unix millisecond of what was issued
};

template <typename Env, typename Kind>
inline IssueStep issue_loop(Env &env, Kind &kind) {
  LeaseSlot *const lease = env.lease();
  for (;;) {
    // The lease's word before the clock: a value issued is checked against both again below.
    const uint64_t word = lease != nullptr ? lease->word.load(std::memory_order_seq_cst) : 0;
    ClockReading now;
    if (unlikely_(!env.read_clock(&now))) continue;
    if (unlikely_(now.unix_ms < kind.origin_unix_ms())) kind.raise_before_origin(now.unix_ms);
    uint64_t limit = env.reserved_unix_ms();
    if (lease != nullptr) {
      if (unlikely_(word == 0 || !lease->open_at(now.mono_ns))) {
        env.await_lease();
        continue;
      }
      limit = std::min(limit, lease->mark_unix_ms.load(std::memory_order_acquire));
    }
    const IssueStep r = kind.step(IssueInput{now.unix_ms, limit, word});
    switch (r.step) {
      case Step::kIssued:
        // Checked again after the compare-and-swap: a lease closed or changed meanwhile drops
        // the value, never returned. (Against the reading taken before the swap, a few
        // instructions earlier: only a process stalled for over lease_ttl - lease_fail_after
        // right there could issue after the deadline, and the mark still keeps its ID unique.)
        if (lease != nullptr && unlikely_(lease->word.load(std::memory_order_seq_cst) != word ||
                                          !lease->open_at(now.mono_ns)))
          continue;
        env.after_issue(r.high_unix_ms, now.unix_ms);
        return r;
      case Step::kReserve:
        if (lease != nullptr)
          env.await_cover(r.value);
        else
          env.await_reservation(r.value);
        break;
      case Step::kWait:
        env.wait_for_clock(r.value);
        break;
      case Step::kInLine:
        env.wait_in_line(r.value);
        break;
      default:
        kind.raise_exhausted(r);
    }
  }
}

// A limit in Unix milliseconds as a limit in a stream's own milliseconds, counted from
// origin_unix_ms (snowflake.epoch for a snowflake shard).
inline uint64_t limit_since(uint64_t limit_unix_ms, uint64_t origin_unix_ms) noexcept {
  return limit_unix_ms > origin_unix_ms ? limit_unix_ms - origin_unix_ms : 0;
}

}  // namespace snowflake
