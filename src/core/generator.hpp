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
enum class Step : uint8_t { kIssued, kWait, kExhausted, kReserve, kNeedRandom };

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
