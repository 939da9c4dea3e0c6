// The shard a server-wide stream's values carry (sno's partition, an xid's machine id, the
// head of a KSUID's payload), where the shard comes after the time and before the counter. A
// value of another shard than the stream's last, in the same unit, would sort by shard, not in
// issue order: a session that sets its own snowflake.shard_id, a reload that changes it, a new
// lease range. So the stream keeps the shard it issues for (its owner word): a value for
// another shard first takes the stream over (a new owner word) and ends the stream's current
// unit, so that the next value goes into the next unit; and a value taken while the stream
// changed hands is dropped (a gap, never a value out of order) and taken again.
//
// The order argument (every access sequentially consistent): a value is returned only when the
// owner word read after its compare-and-swap on last is the one read before. A takeover writes
// the owner word, then ends the unit in last. A value whose swap comes before the takeover's
// owner write is in last when the unit is ended, so every value after the takeover is in a
// later unit; one whose swap comes after it reads the new owner word and is dropped.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake {

// (takeovers << 32) | (shard + 1); 0: no value yet.
using StreamOwner = std::atomic<uint64_t>;

// The step take() of a stream whose word last is (unit << counter bits) | counter, for values
// of shard: take() is the stream's own step (a compare-and-swap on last); counter_mask the
// counter's bits.
template <typename Take>
inline NextResult issue_for_shard(StreamOwner &owner, std::atomic<uint64_t> &last,
                                  uint64_t counter_mask, uint32_t shard, Take take) noexcept {
  const uint64_t mine = uint64_t{shard} + 1;
  for (;;) {
    uint64_t seen = owner.load(std::memory_order_seq_cst);
    if (unlikely_((seen & 0xffffffff) != mine)) {
      const uint64_t next = ((seen >> 32) + 1) << 32 | mine;
      if (!owner.compare_exchange_strong(seen, next, std::memory_order_seq_cst)) continue;
      // The unit's counter used up: its next value carries into the next unit.
      uint64_t word = last.load(std::memory_order_seq_cst);
      while (word != 0 && (word & counter_mask) != counter_mask &&
             !last.compare_exchange_weak(word, word | counter_mask, std::memory_order_seq_cst)) {
      }
      seen = next;
    }
    const NextResult r = take();
    if (r.step != Step::kIssued || owner.load(std::memory_order_seq_cst) == seen) return r;
  }
}

}  // namespace snowflake
