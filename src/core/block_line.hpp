// The line that blocks (snowflake_block) wait in: first come, first served among blocks of the
// same shards, so that every block is taken within a bound whatever other sessions do.
//
// A block of n needs room up to its span (block_span_ms) ahead of the clock, within its lead
// bound; single IDs (snowflake()) run up to snowflake.max_lead ahead and, at the shard's
// capacity, keep the stream there. So:
// - a block that cannot be taken at once takes a place in line, and a block that comes while
//   others wait for shards it needs goes behind them: only the head for those shards takes
//   (blocks of other shards, say another database's snowflake.shard_id, do not wait for it);
// - once the head has been head for kBlockCapAfterMs, single IDs of its shards pause (they wait
//   for the clock, a millisecond at a time) until it has its block. The stream then falls back
//   to the clock, within the lead it had, and the head's block fits at the clock's millisecond.
//   Single IDs of other shards never pause, and after a pause no new one starts for as long
//   as it lasted (kBlockCapAfterMs at least): sessions looping blocks leave single IDs at least
//   half the time.
// A pause lasts at most the stream's lead, so snowflake.max_lead + the span of a block before
// it. A head therefore waits at most kBlockCapAfterMs (as head, or the cool-down of the last
// pause, up to max_lead + a span) + max_lead + a span + a few milliseconds: 2 x (max_lead +
// 100 ms) + 100 ms, about 2.35 s at the defaults; a block behind k others that too for each.
// A place is a slot holding a ticket and the block's shards; leaving (taken, cancelled, or the
// process exiting) frees it, so a session that is gone never holds up the line. More than
// kBlockLineSlots blocks waiting at once: the others poll for a place, in no order.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake {

constexpr uint32_t kBlockLineSlots = 128;
constexpr uint64_t kBlockCapAfterMs = 100;
constexpr uint64_t kLineClaiming = 1;  // a slot being taken: earlier than every ticket

// Shards first .. first + count - 1, as one word: (first << 16) | count.
constexpr uint64_t shard_span(uint32_t first, uint32_t count) noexcept {
  return (uint64_t{first} << 16) | count;
}
constexpr bool spans_meet(uint64_t a, uint64_t b) noexcept {
  const uint64_t a0 = a >> 16, a1 = a0 + (a & 0xffff), b0 = b >> 16, b1 = b0 + (b & 0xffff);
  return a0 < b1 && b0 < a1;
}

struct alignas(64) BlockLine {
  // Read on every single ID, written only while blocks pause them: a cache line of its own.
  std::atomic<uint64_t> paused_by;    // the ticket of the head that pauses single IDs, 0: none
  std::atomic<uint64_t> paused_span;  // the shards it pauses (shard_span)
  alignas(64) std::atomic<uint64_t> next_ticket;
  std::atomic<uint32_t> waiting;                  // places taken
  std::atomic<uint64_t> no_pause_before_unix_ms;  // the cool-down after a pause
  std::atomic<uint64_t> paused_since_unix_ms;     // when the pause in force began
  std::atomic<uint64_t> served;                   // blocks taken after waiting in line, since start
  std::atomic<uint64_t> longest_wait_ms;          // the longest a block waited in line, since start
  std::atomic<uint64_t> tickets[kBlockLineSlots];  // 0: free; kLineClaiming: being taken
  std::atomic<uint64_t> spans[kBlockLineSlots];    // each place's shards

  void init() noexcept {
    paused_by.store(0);
    paused_span.store(0);
    next_ticket.store(kLineClaiming);
    waiting.store(0);
    no_pause_before_unix_ms.store(0);
    paused_since_unix_ms.store(0);
    served.store(0);
    longest_wait_ms.store(0);
    for (std::atomic<uint64_t> &t : tickets) t.store(0);
    for (std::atomic<uint64_t> &s : spans) s.store(0);
  }
  // On every single ID of span: one load of a word that changes only while blocks wait.
  bool singles_paused(uint64_t span) const noexcept {
    return paused_by.load(std::memory_order_relaxed) != 0 &&
           spans_meet(paused_span.load(std::memory_order_relaxed), span);
  }
};

// One block call's place in line (slot -1: none).
struct LinePlace {
  int slot = -1;
  uint64_t ticket = 0;
  uint64_t span = 0;
  uint64_t since_unix_ms = 0;       // when it took its place
  uint64_t head_since_unix_ms = 0;  // when it became head, 0: not yet
};

// Takes a place at the back of the line for the shards of span; false when every slot is
// taken. The slot is claimed before the ticket is drawn, so that no later ticket can be head
// while an earlier one is still being written.
inline bool line_join(BlockLine &line, LinePlace &place, uint64_t span,
                      uint64_t now_unix_ms) noexcept {
  for (uint32_t i = 0; i < kBlockLineSlots; ++i) {
    uint64_t free = 0;
    if (line.tickets[i].load(std::memory_order_relaxed) != 0 ||
        !line.tickets[i].compare_exchange_strong(free, kLineClaiming, std::memory_order_acq_rel))
      continue;
    line.spans[i].store(span, std::memory_order_relaxed);
    const uint64_t ticket = line.next_ticket.fetch_add(1, std::memory_order_acq_rel) + 1;
    line.tickets[i].store(ticket, std::memory_order_release);
    line.waiting.fetch_add(1, std::memory_order_acq_rel);
    place = LinePlace{static_cast<int>(i), ticket, span, now_unix_ms, 0};
    return true;
  }
  return false;
}

// Whether no place of the same shards holds an earlier ticket (a slot being claimed counts as
// earlier, for the moment it takes).
inline bool line_head(const BlockLine &line, uint64_t ticket, uint64_t span) noexcept {
  for (uint32_t i = 0; i < kBlockLineSlots; ++i) {
    const uint64_t v = line.tickets[i].load(std::memory_order_acquire);
    if (v == 0 || v >= ticket) continue;
    if (v == kLineClaiming || spans_meet(line.spans[i].load(std::memory_order_relaxed), span))
      return false;
  }
  return true;
}

// Gives the place up (if any): after the block was taken, or when the call ends otherwise. A
// head that paused single IDs lifts the pause, and none starts again for as long as it lasted
// (kBlockCapAfterMs at least): single IDs keep at least half the time.
inline void line_leave(BlockLine &line, LinePlace &place, uint64_t now_unix_ms,
                       bool served) noexcept {
  if (place.slot < 0) return;
  uint64_t mine = place.ticket;
  if (line.paused_by.compare_exchange_strong(mine, 0, std::memory_order_acq_rel)) {
    const uint64_t since = line.paused_since_unix_ms.load(std::memory_order_acquire);
    const uint64_t lasted = now_unix_ms > since ? now_unix_ms - since : 0;
    line.no_pause_before_unix_ms.store(now_unix_ms + std::max(kBlockCapAfterMs, lasted),
                                       std::memory_order_release);
  }
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

// One try of a block call on shards slots[0 .. count - 1] (span: their shard_span): its turn in
// line, then take_block (one shard) or take_block_in_range (floor_ms, above the backend's place
// after). Not its turn: kInLine, 1 ms. A head that may not pause single IDs yet waits no
// longer than until it may. With wait false, take_block_now's: what the stream holds now, never
// going before blocks in line for these shards.
template <int SeqBits, typename Slot>
inline RangeBlockResult line_take_block(BlockLine &line, LinePlace &place, Slot *slots,
                                        uint32_t count, uint64_t span,
                                        std::atomic<uint64_t> &floor_ms, uint64_t n,
                                        uint64_t now_ms, uint64_t now_unix_ms, const Limits &limits,
                                        const RangeCursor &after = RangeCursor{},
                                        bool wait = true) noexcept {
  const bool others_wait = line.waiting.load(std::memory_order_acquire) != 0;
  if (!wait) {
    if (others_wait && !line_head(line, UINT64_MAX, span))
      return RangeBlockResult{BlockResult{Step::kIssued, 0, 0}, 0};
    return count == 1
               ? RangeBlockResult{take_block_now<SeqBits>(slots[0].last, n, now_ms, 0, limits), 0}
               : take_block_in_range<SeqBits>(slots, count, floor_ms, n, now_ms, limits, after,
                                              false);
  }
  const RangeBlockResult not_yet{BlockResult{Step::kInLine, 1, 0}, 0};
  if (place.slot < 0 && others_wait && !line_head(line, UINT64_MAX, span) &&
      !line_join(line, place, span, now_unix_ms))
    return not_yet;
  uint64_t may_pause_at = 0;
  if (place.slot >= 0) {
    if (!line_head(line, place.ticket, span)) return not_yet;
    if (place.head_since_unix_ms == 0) place.head_since_unix_ms = now_unix_ms;
    may_pause_at = std::max(place.head_since_unix_ms + kBlockCapAfterMs,
                            line.no_pause_before_unix_ms.load(std::memory_order_acquire));
    if (now_unix_ms >= may_pause_at) {
      // One pause at a time; its shards are written once it is this head's (a single ID that
      // reads the pause before them passes for that moment).
      uint64_t none = 0;
      if (line.paused_by.compare_exchange_strong(none, place.ticket, std::memory_order_acq_rel)) {
        line.paused_since_unix_ms.store(now_unix_ms, std::memory_order_relaxed);
        line.paused_span.store(span, std::memory_order_release);
      }
      if (line.paused_by.load(std::memory_order_acquire) == place.ticket) may_pause_at = 0;
    }
  }
  RangeBlockResult r =
      count == 1 ? RangeBlockResult{take_block<SeqBits>(slots[0].last, n, now_ms, 0, limits), 0}
                 : take_block_in_range<SeqBits>(slots, count, floor_ms, n, now_ms, limits, after);
  if (r.block.step == Step::kWait) {
    if (place.slot < 0 && line_join(line, place, span, now_unix_ms)) {
      place.head_since_unix_ms = line_head(line, place.ticket, span) ? now_unix_ms : 0;
      may_pause_at = place.head_since_unix_ms + kBlockCapAfterMs;
    }
    // Back in time to pause single IDs, whatever the clock's wait.
    if (may_pause_at > now_unix_ms)
      r.block.value = std::min(r.block.value, may_pause_at - now_unix_ms);
  }
  return r;
}

}  // namespace snowflake
