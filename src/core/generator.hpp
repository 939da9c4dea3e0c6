// The generator state machine: one 64-bit word per stream holding (milliseconds << seq_bits
// | sequence) of the last value issued, advanced with compare-and-swap, so that values of one
// stream are strictly increasing in issue order across every process sharing the word.
#pragma once
#include "core/pg_free.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

inline bool unlikely_(bool b) noexcept { return __builtin_expect(b, 0); }

// kReserve: the value would reach the durable reservation, which must be extended first.
// kNeedRandom: only from ulid_next, when it starts a new millisecond and was given no
// random bits.
// kInLine: a wait for a block ahead in line (block_line.hpp), not for the clock.
enum class Step : uint8_t { kIssued, kWait, kExhausted, kReserve, kNeedRandom, kInLine };

struct NextResult {
  Step step;
  uint64_t value;  // kIssued: the new state; kWait: milliseconds until the clock allows more;
                   // kReserve: the millisecond that the reservation must cover
};

// How far a stream may go.
struct Limits {
  uint64_t max_lead_ms;  // ahead of the clock, when the sequence of a millisecond is used up
  uint64_t max_ms;       // the largest millisecond the layout can hold
  uint64_t reserved_ms;  // values must stay below this millisecond (the durable reservation)
};

template <int SeqBits>
inline NextResult next_state(std::atomic<uint64_t> &last, uint64_t now_ms,
                             const Limits &limits) noexcept {
  uint64_t cur = last.load(std::memory_order_relaxed);
  for (;;) {
    // A new millisecond starts at sequence 0; within one the sequence counts up and carries
    // into the next millisecond when full.
    const uint64_t cand = std::max(cur + 1, now_ms << SeqBits);
    const uint64_t ms = cand >> SeqBits;
    if (ms > limits.max_ms) return NextResult{Step::kExhausted, 0};
    if (ms > now_ms + limits.max_lead_ms)
      return NextResult{Step::kWait, ms - limits.max_lead_ms - now_ms};
    if (unlikely_(ms >= limits.reserved_ms)) return NextResult{Step::kReserve, ms};
    // Sequentially consistent, as the lease's check after issuing needs (lease.hpp); on x86
    // and arm64 the same instruction as acquire-release.
    if (last.compare_exchange_weak(cur, cand, std::memory_order_seq_cst, std::memory_order_relaxed))
      return NextResult{Step::kIssued, cand};
  }
}

// Several shards issuing as one stream (snowflake.shard_count): a server's rate is then the
// range's, count times a shard's. Every call takes the next value of millisecond e = max(the
// clock, the range's floor, this backend's last e) on the lowest shard of the range that has
// room in it, from where this backend last issued in e on; when none has, the range's floor
// moves to e + 1 (the lead, bounded as for one shard). A shard another backend is taking
// from at the same instant (its compare-and-swap fails) is left to it, and the call goes on
// to the next: sessions that meet spread over the range instead of passing one cache line
// back and forth. So each shard still strictly increases; one backend's IDs strictly
// increase (in e it only moves up, and the shards it passed stay passed); and no ID of the
// range is in a millisecond before the floor, which only rises. A shard is never taken past
// e here: a call of snowflake(shard) may run one ahead alone, and the range finds it full.
struct RangeResult {
  Step step;
  uint64_t value;  // as NextResult's
  uint32_t shard;  // kIssued: the shard the value belongs to (0 is the range's first)
};

// A backend's place in a range: the millisecond and shard it last issued in.
struct RangeCursor {
  uint64_t ms = 0;
  uint32_t shard = 0;
};

template <int SeqBits, typename Slot>
inline RangeResult next_in_range(Slot *slots, uint32_t count, std::atomic<uint64_t> &floor_ms,
                                 RangeCursor &cursor, uint64_t now_ms,
                                 const Limits &limits) noexcept {
  for (;;) {
    const uint64_t e = std::max({now_ms, floor_ms.load(std::memory_order_acquire), cursor.ms});
    if (e > limits.max_ms) return RangeResult{Step::kExhausted, 0, 0};
    if (e > now_ms + limits.max_lead_ms)
      return RangeResult{Step::kWait, e - limits.max_lead_ms - now_ms, 0};
    if (unlikely_(e >= limits.reserved_ms)) return RangeResult{Step::kReserve, e, 0};
    const uint64_t first_of_e = e << SeqBits;
    for (uint32_t i = cursor.ms == e ? cursor.shard : 0; i < count; ++i) {
      std::atomic<uint64_t> &last = slots[i].last;
      uint64_t cur = last.load(std::memory_order_relaxed);
      const uint64_t cand = std::max(cur + 1, first_of_e);
      if ((cand >> SeqBits) != e) continue;  // full at e (or ahead of it)
      if (last.compare_exchange_strong(cur, cand, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
        cursor.ms = e;
        cursor.shard = i;
        return RangeResult{Step::kIssued, cand, i};
      }
    }
    // No shard of the range from here on has room at e: the range takes the next millisecond.
    uint64_t cur = floor_ms.load(std::memory_order_relaxed);
    while (cur < e + 1 && !floor_ms.compare_exchange_weak(cur, e + 1, std::memory_order_acq_rel,
                                                          std::memory_order_relaxed)) {
    }
  }
}

}  // namespace snowflake

namespace snowflake {

// Blocks (snowflake_block): n consecutive values of one stream taken in one compare-and-swap,
// for a client to hand out. A block is every value from first to last of one stream word:
// within a millisecond consecutive sequences, then the next millisecond from sequence 0, so
// last = first + n - 1 (the milliseconds carry over; block_first says where it starts). Its
// last value obeys what one value does: the layout's end, the reservation (which must cover
// last before the block is returned) and a lead bound, the caller's (snowflake.block_max_lead,
// within snowflake.max_lead): so a role without privileges moves no session's IDs further
// ahead of the clock with blocks than the operator allows.
constexpr uint64_t kMaxBlockValues = uint64_t{1} << 20;

inline constexpr bool block_size_ok(int64_t n) noexcept {
  return n >= 1 && static_cast<uint64_t>(n) <= kMaxBlockValues;
}

// The milliseconds a block of n reaches past the clock's when the clock's millisecond still
// has room (at worst, one sequence: the block starts on its last), floor((n + 2^SeqBits - 2) /
// 2^SeqBits): 0 for n = 1, as for one value. A block whose millisecond is full waits for the
// next, as one value does.
template <int SeqBits>
constexpr uint64_t block_span_ms(uint64_t n) noexcept {
  return (n + (uint64_t{1} << SeqBits) - 2) >> SeqBits;
}

// A block of n can be taken under a lead bound of max_lead_ms once the clock's millisecond has
// room; one that cannot is refused (take_block would wait without end).
template <int SeqBits>
constexpr bool block_fits_lead(uint64_t n, uint64_t max_lead_ms) noexcept {
  return block_span_ms<SeqBits>(n) <= max_lead_ms;
}

struct BlockResult {
  Step step;
  uint64_t value;  // kIssued: the last value (a state word); kExhausted: the values left before
                   // the layout's end (fewer than the block's); otherwise as NextResult's
  uint64_t first;  // kIssued: the first value
};

// The first value of a block of n after cur, from millisecond from_ms on. Up to a
// millisecond's worth (n <= 2^SeqBits), a block is n consecutive integers, last = first + n - 1:
// one that the rest of that millisecond cannot hold starts at the next one, from sequence 0 (the
// sequences it skips are never issued). A larger block runs through the sequences of a
// millisecond and carries into the next ones.
template <int SeqBits>
constexpr uint64_t block_first(uint64_t cur, uint64_t n, uint64_t from_ms) noexcept {
  constexpr uint64_t per_ms = uint64_t{1} << SeqBits;
  const uint64_t first = std::max(cur + 1, from_ms << SeqBits);
  return n <= per_ms && (first & (per_ms - 1)) + n > per_ms ? ((first >> SeqBits) + 1) << SeqBits
                                                            : first;
}

// n from 1 to kMaxBlockValues (block_size_ok) and block_fits_lead; floor_ms: no value below
// this millisecond (a range's floor, 0 for one shard).
template <int SeqBits>
inline BlockResult take_block(std::atomic<uint64_t> &last, uint64_t n, uint64_t now_ms,
                              uint64_t floor_ms, const Limits &limits) noexcept {
  const uint64_t lead = limits.max_lead_ms;
  uint64_t cur = last.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t first = block_first<SeqBits>(cur, n, std::max(now_ms, floor_ms));
    const uint64_t end = first + (n - 1);
    const uint64_t ms = end >> SeqBits;
    if (ms > limits.max_ms) {
      // The values left, counted from the next one (a smaller block could still take them).
      const uint64_t next = std::max(cur + 1, std::max(now_ms, floor_ms) << SeqBits);
      const uint64_t past_end = (limits.max_ms + 1) << SeqBits;
      return BlockResult{Step::kExhausted, next < past_end ? past_end - next : 0, 0};
    }
    if (ms > now_ms + lead) return BlockResult{Step::kWait, ms - lead - now_ms, 0};
    if (unlikely_(ms >= limits.reserved_ms)) return BlockResult{Step::kReserve, ms, 0};
    if (last.compare_exchange_weak(cur, end, std::memory_order_seq_cst, std::memory_order_relaxed))
      return BlockResult{Step::kIssued, end, first};
  }
}

// The no-wait form (snowflake_block(n, wait => false)): as many of the next n values as the
// stream holds now, without waiting for the clock or the reservation: up to the lead bound,
// below the reservation, within the layout. Up to a millisecond's worth, the values are
// consecutive integers, within the first one's millisecond. kIssued always; value 0 (and first
// 0) when nothing could be taken now.
template <int SeqBits>
inline BlockResult take_block_now(std::atomic<uint64_t> &last, uint64_t n, uint64_t now_ms,
                                  uint64_t floor_ms, const Limits &limits) noexcept {
  constexpr uint64_t per_ms = uint64_t{1} << SeqBits;
  const BlockResult none{Step::kIssued, 0, 0};
  if (limits.reserved_ms == 0) return none;
  // The first value past what may be taken now.
  const uint64_t top_ms =
      std::min({now_ms + limits.max_lead_ms, limits.max_ms, limits.reserved_ms - 1});
  const uint64_t stop = (top_ms + 1) << SeqBits;
  uint64_t cur = last.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t first = std::max(cur + 1, std::max(now_ms, floor_ms) << SeqBits);
    if (first >= stop) return none;
    uint64_t take = std::min(n, stop - first);
    if (n <= per_ms) take = std::min(take, per_ms - (first & (per_ms - 1)));
    const uint64_t end = first + take - 1;
    if (last.compare_exchange_weak(cur, end, std::memory_order_seq_cst, std::memory_order_relaxed))
      return BlockResult{Step::kIssued, end, first};
  }
}

// A block from a range of shards (snowflake.shard_count > 1) comes from one shard: the one
// furthest behind (the smallest last value; of equals, the lowest), so that it moves the
// range's IDs least ahead, and never below the range's floor. A block of n moves that shard
// n >> SeqBits ms ahead, the range's other shards not at all. after is the calling backend's
// place in the range (next_in_range's cursor): the block starts above it, so that a backend's
// IDs increase across its blocks too (on a shard below the cursor's, from the next
// millisecond on).
struct RangeBlockResult {
  BlockResult block;
  uint32_t shard;  // kIssued: the shard the block belongs to (0 is the range's first)
};

template <int SeqBits, typename Slot>
inline RangeBlockResult take_block_in_range(Slot *slots, uint32_t count,
                                            std::atomic<uint64_t> &floor_ms, uint64_t n,
                                            uint64_t now_ms, const Limits &limits,
                                            const RangeCursor &after = RangeCursor{},
                                            bool wait = true) noexcept {
  uint32_t pick = 0;
  uint64_t least = slots[0].last.load(std::memory_order_relaxed);
  for (uint32_t i = 1; i < count; ++i) {
    const uint64_t v = slots[i].last.load(std::memory_order_relaxed);
    if (v < least) {
      least = v;
      pick = i;
    }
  }
  const uint64_t own = pick < after.shard ? after.ms + 1 : after.ms;
  const uint64_t from = std::max(floor_ms.load(std::memory_order_acquire), own);
  return RangeBlockResult{wait ? take_block<SeqBits>(slots[pick].last, n, now_ms, from, limits)
                               : take_block_now<SeqBits>(slots[pick].last, n, now_ms, from, limits),
                          pick};
}

// The value after id in its block (the client's rule): the next sequence of its shard, or
// sequence 0 of the next millisecond after the last one.
template <int ShardBits, int SeqBits>
constexpr uint64_t next_in_block(uint64_t id) noexcept {
  constexpr uint64_t seq_max = (uint64_t{1} << SeqBits) - 1;
  return (id & seq_max) != seq_max ? id + 1
                                   : ((id >> (ShardBits + SeqBits)) + 1) << (ShardBits + SeqBits) |
                                         (id & (((uint64_t{1} << ShardBits) - 1) << SeqBits));
}

}  // namespace snowflake
