// The line that blocks (snowflake_block) wait in, one per server: first come, first served,
// so that every block is taken within a bound whatever other sessions do.
//
// A block of n needs room up to its span (block_span_ms) ahead of the clock, within its lead
// bound; single IDs (snowflake()) run up to snowflake.max_lead ahead and, at the shard's
// capacity, keep the stream there. So:
// - a block that cannot be taken at once waits in line, and a block that comes while others
//   wait goes behind them: only the head of the line takes;
// - once the head has waited kBlockCapAfterMs, single IDs pause (they wait for the clock, a
//   millisecond at a time) until the head has its block. The stream then falls back to the
//   clock, within the lead it had, and the head's block fits at the clock's millisecond.
//   Single IDs pause only when a block has waited that long: when they keep the shard at its
//   capacity, or a block just before took the lead the next one needs.
// A head therefore waits at most kBlockCapAfterMs + snowflake.max_lead + a few milliseconds;
// a block behind k others waits for them too. A place is a slot holding a ticket; leaving
// (taken, cancelled, or the process exiting) frees it, so a session that is gone never holds
// up the line.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake {

constexpr uint32_t kBlockLineSlots =
    128;  // blocks waiting at once; a further one polls for a place
constexpr uint64_t kBlockCapAfterMs = 100;

struct alignas(64) BlockLine {
  std::atomic<uint64_t> next_ticket;
  std::atomic<uint32_t> waiting;          // places taken
  std::atomic<uint64_t> capped_by;        // the ticket of the head that pauses single IDs, 0: none
  std::atomic<uint64_t> served;           // blocks taken after waiting in line, since start
  std::atomic<uint64_t> longest_wait_ms;  // the longest a block waited in line, since start
  std::atomic<uint64_t> tickets[kBlockLineSlots];  // 0: free

  void init() noexcept {
    next_ticket.store(0);
    waiting.store(0);
    capped_by.store(0);
    served.store(0);
    longest_wait_ms.store(0);
    for (std::atomic<uint64_t> &t : tickets) t.store(0);
  }
  // On every single ID: one load of a line that changes only while blocks wait.
  bool singles_paused() const noexcept { return capped_by.load(std::memory_order_relaxed) != 0; }
};

// One block call's place in line (slot -1: none).
struct LinePlace {
  int slot = -1;
  uint64_t ticket = 0;
  uint64_t since_unix_ms = 0;
};

// Takes a place at the back of the line; false when every slot is taken.
inline bool line_join(BlockLine &line, LinePlace &place, uint64_t now_unix_ms) noexcept {
  for (uint32_t i = 0; i < kBlockLineSlots; ++i) {
    if (line.tickets[i].load(std::memory_order_relaxed) != 0) continue;
    const uint64_t ticket = line.next_ticket.fetch_add(1, std::memory_order_acq_rel) + 1;
    uint64_t free = 0;
    if (line.tickets[i].compare_exchange_strong(free, ticket, std::memory_order_acq_rel)) {
      line.waiting.fetch_add(1, std::memory_order_acq_rel);
      place = LinePlace{static_cast<int>(i), ticket, now_unix_ms};
      return true;
    }
  }
  return false;
}

// Whether no place holds an earlier ticket.
inline bool line_head(const BlockLine &line, uint64_t ticket) noexcept {
  for (const std::atomic<uint64_t> &t : line.tickets) {
    const uint64_t v = t.load(std::memory_order_acquire);
    if (v != 0 && v < ticket) return false;
  }
  return true;
}

// Gives the place up (if any): after the block was taken, or when the call ends otherwise.
inline void line_leave(BlockLine &line, LinePlace &place, uint64_t now_unix_ms,
                       bool served) noexcept {
  if (place.slot < 0) return;
  uint64_t mine = place.ticket;
  line.capped_by.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
  line.tickets[place.slot].store(0, std::memory_order_release);
  line.waiting.fetch_sub(1, std::memory_order_acq_rel);
  if (served) {
    line.served.fetch_add(1, std::memory_order_relaxed);
    const uint64_t waited =
        now_unix_ms > place.since_unix_ms ? now_unix_ms - place.since_unix_ms : 0;
    uint64_t cur = line.longest_wait_ms.load(std::memory_order_relaxed);
    while (cur < waited && !line.longest_wait_ms.compare_exchange_weak(cur, waited)) {
    }
  }
  place = LinePlace{};
}

// One try of a block call: its turn in line, then take_block (one shard) or
// take_block_in_range (slots[0 .. count - 1], floor_ms, above the backend's place after). Not
// its turn: kWait for 1 ms.
template <int SeqBits, typename Slot>
inline RangeBlockResult line_take_block(BlockLine &line, LinePlace &place, Slot *slots,
                                        uint32_t count, std::atomic<uint64_t> &floor_ms, uint64_t n,
                                        uint64_t now_ms, uint64_t now_unix_ms, const Limits &limits,
                                        const RangeCursor &after = RangeCursor{}) noexcept {
  const RangeBlockResult not_yet{BlockResult{Step::kWait, 1, 0}, 0};
  if (place.slot < 0 && line.waiting.load(std::memory_order_acquire) != 0 &&
      !line_join(line, place, now_unix_ms))
    return not_yet;
  if (place.slot >= 0) {
    if (!line_head(line, place.ticket)) return not_yet;
    if (now_unix_ms >= place.since_unix_ms + kBlockCapAfterMs) {
      uint64_t none = 0;
      line.capped_by.compare_exchange_strong(none, place.ticket, std::memory_order_acq_rel);
    }
  }
  const RangeBlockResult r =
      count == 1 ? RangeBlockResult{take_block<SeqBits>(slots[0].last, n, now_ms, 0, limits), 0}
                 : take_block_in_range<SeqBits>(slots, count, floor_ms, n, now_ms, limits, after);
  if (r.block.step == Step::kWait && place.slot < 0) line_join(line, place, now_unix_ms);
  return r;
}

}  // namespace snowflake
