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
//   Single IDs of other shards never pause, and after a pause no new one starts on the shards
//   it paused for as long as it lasted (kBlockCapAfterMs at least): sessions looping blocks
//   leave single IDs at least half the time.
// Pauses are per shard: heads of shards that do not meet pause at once, each in a pause slot of
// its own that keeps its cool-down after it ends (kBlockPauseSlots of them; with all held or
// cooling, a head waits for one, which the bound below covers while no more than that many
// shards' blocks wait at once). A pause that ends with no clock to say when (a process leaving
// the line on its way out) cools from when it began.
// A pause lasts at most the stream's lead, so snowflake.max_lead + the span of a block before
// it. A head therefore waits at most kBlockCapAfterMs (as head, or the cool-down of the last
// pause of its shards, up to max_lead + a span) + max_lead + a span + a few milliseconds:
// 2 x (max_lead + 100 ms) + 100 ms, about 2.35 s at the defaults, whatever other shards'
// blocks do; a block behind k others of its shards that too for each.
// A place is a slot holding a ticket and the block's shards; leaving (taken, cancelled, or the
// process exiting) frees it, so a session that is gone never holds up the line. More than
// kBlockLineSlots blocks waiting at once: the others poll for a place, in no order.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

constexpr uint32_t kBlockLineSlots = 128;
constexpr uint32_t kBlockPauseSlots = 16;
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

// One pause of single IDs: by the head whose ticket it holds (0: none; kLineClaiming: being
// taken), on its shards, since when; and, kept after it ends, until when no new pause of
// shards that meet these may start.
struct alignas(64) BlockPause {
  std::atomic<uint64_t> by;
  std::atomic<uint64_t> span;
  std::atomic<uint64_t> since_unix_ms;
  std::atomic<uint64_t> cool_until_unix_ms;
};

struct alignas(64) BlockLine {
  // Read on every single ID, written only while blocks pause them: a cache line of its own.
  std::atomic<uint32_t> pauses;  // pauses in force
  alignas(64) BlockPause pause[kBlockPauseSlots];
  alignas(64) std::atomic<uint64_t> next_ticket;
  std::atomic<uint32_t> waiting;          // places taken
  std::atomic<uint64_t> served;           // blocks taken after waiting in line, since start
  std::atomic<uint64_t> longest_wait_ms;  // the longest a block waited in line, since start
  std::atomic<uint64_t> tickets[kBlockLineSlots];  // 0: free; kLineClaiming: being taken
  std::atomic<uint64_t> spans[kBlockLineSlots];    // each place's shards

  void init() noexcept {
    pauses.store(0);
    for (BlockPause &p : pause) {
      p.by.store(0);
      p.span.store(0);
      p.since_unix_ms.store(0);
      p.cool_until_unix_ms.store(0);
    }
    next_ticket.store(kLineClaiming);
    waiting.store(0);
    served.store(0);
    longest_wait_ms.store(0);
    for (std::atomic<uint64_t> &t : tickets) t.store(0);
    for (std::atomic<uint64_t> &s : spans) s.store(0);
  }
  // On every single ID of span: one load of a word that changes only while blocks pause.
  bool singles_paused(uint64_t span) const noexcept {
    if (pauses.load(std::memory_order_relaxed) == 0) return false;
    for (const BlockPause &p : pause)
      if (p.by.load(std::memory_order_acquire) > kLineClaiming &&
          spans_meet(p.span.load(std::memory_order_relaxed), span))
        return true;
    return false;
  }
  // The earliest Unix millisecond a head of span may pause single IDs at: past the cool-down of
  // every pause of shards that meet these.
  uint64_t cooled_at(uint64_t span) const noexcept {
    uint64_t at = 0;
    for (const BlockPause &p : pause)
      if (spans_meet(p.span.load(std::memory_order_acquire), span))
        at = std::max(at, p.cool_until_unix_ms.load(std::memory_order_acquire));
    return at;
  }
  // A pause of span by ticket, in a slot that is free and cooled (its shards are written before
  // the ticket, so that a single ID that sees the ticket sees them); -1 when there is none.
  int start_pause(uint64_t ticket, uint64_t span, uint64_t now_unix_ms) noexcept {
    for (uint32_t i = 0; i < kBlockPauseSlots; ++i) {
      BlockPause &p = pause[i];
      uint64_t none = 0;
      if (p.by.load(std::memory_order_relaxed) != 0 ||
          !p.by.compare_exchange_strong(none, kLineClaiming, std::memory_order_acq_rel))
        continue;
      // Owned now: the cool-down read is the one the pause that ended here stored.
      if (p.cool_until_unix_ms.load(std::memory_order_acquire) > now_unix_ms) {
        p.by.store(0, std::memory_order_release);
        continue;
      }
      p.span.store(span, std::memory_order_relaxed);
      p.since_unix_ms.store(now_unix_ms, std::memory_order_relaxed);
      pauses.fetch_add(1, std::memory_order_acq_rel);
      p.by.store(ticket, std::memory_order_release);
      return static_cast<int>(i);
    }
    return -1;
  }
  // Ends pause i: no new one of its shards for as long as it lasted (kBlockCapAfterMs at
  // least), from now, or with no clock (0) from when it began.
  void end_pause(int i, uint64_t now_unix_ms) noexcept {
    BlockPause &p = pause[i];
    const uint64_t since = p.since_unix_ms.load(std::memory_order_relaxed);
    const uint64_t end = std::max(now_unix_ms, since);
    p.cool_until_unix_ms.store(end + std::max(kBlockCapAfterMs, end - since),
                               std::memory_order_release);
    p.by.store(0, std::memory_order_release);
    pauses.fetch_sub(1, std::memory_order_acq_rel);
  }
};

// One block call's place in line (slot -1: none).
struct LinePlace {
  int slot = -1;
  uint64_t ticket = 0;
  uint64_t span = 0;
  uint64_t since_unix_ms = 0;       // when it took its place
  uint64_t head_since_unix_ms = 0;  // when it became head, 0: not yet
  uint64_t seen_unix_ms = 0;        // the latest clock its tries read
  int pause = -1;                   // the pause slot it holds, -1: none
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
    place = LinePlace{static_cast<int>(i), ticket, span, now_unix_ms, 0, now_unix_ms, -1};
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

// Gives the place up (if any): after the block was taken, or when the call ends otherwise (a
// cancel or an ERROR, with whatever clock the caller has, 0 for none: the latest its tries read
// counts then). A head that paused single IDs lifts the pause, and none starts again on its
// shards for as long as it lasted (kBlockCapAfterMs at least): single IDs keep at least half
// the time.
inline void line_leave(BlockLine &line, LinePlace &place, uint64_t now_unix_ms,
                       bool served) noexcept {
  if (place.slot < 0) return;
  now_unix_ms = std::max(now_unix_ms, place.seen_unix_ms);
  if (place.pause >= 0) line.end_pause(place.pause, now_unix_ms);
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
    place.seen_unix_ms = std::max(place.seen_unix_ms, now_unix_ms);
    if (!line_head(line, place.ticket, span)) return not_yet;
    if (place.head_since_unix_ms == 0) place.head_since_unix_ms = now_unix_ms;
    may_pause_at = std::max(place.head_since_unix_ms + kBlockCapAfterMs, line.cooled_at(span));
    // A pause of its own shards (heads of shards that do not meet pause at once).
    if (place.pause < 0 && now_unix_ms >= may_pause_at) {
      place.pause = line.start_pause(place.ticket, span, now_unix_ms);
      if (place.pause < 0) may_pause_at = now_unix_ms + 1;  // every slot held: try again
    }
    if (place.pause >= 0) may_pause_at = 0;
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
