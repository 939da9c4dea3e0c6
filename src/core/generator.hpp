// The generator state machine: one 64-bit word per stream holding (milliseconds << seq_bits
// | sequence) of the last value issued, advanced with compare-and-swap, so that values of one
// stream are strictly increasing in issue order across every process sharing the word.
#pragma once
#include "pg_free.hpp"

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
    if (last.compare_exchange_weak(cur, cand, std::memory_order_acq_rel,
                                   std::memory_order_relaxed))
      return NextResult{Step::kIssued, cand};
  }
}

}  // namespace snowflake
