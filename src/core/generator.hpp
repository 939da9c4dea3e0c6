// The generator state machine: one 64-bit word per stream holding (milliseconds << seq_bits
// | sequence) of the last value issued, advanced with compare-and-swap, so that values of one
// stream are strictly increasing in issue order across every process sharing the word.
#pragma once
#include "pg_free.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

// kNeedRandom: only from ulid_next, when it starts a new millisecond and was given no
// random bits.
enum class Step : uint8_t { kIssued, kWait, kExhausted, kNeedRandom };

struct NextResult {
  Step step;
  uint64_t value;  // kIssued: the new state; kWait: milliseconds until the clock allows more
};

// now_ms: the clock; max_lead_ms: how far the state may run ahead of it when the sequence of
// a millisecond is used up; max_ms: the largest millisecond the layout can hold.
template <int SeqBits>
inline NextResult next_state(std::atomic<uint64_t> &last, uint64_t now_ms, uint64_t max_lead_ms,
                             uint64_t max_ms) noexcept {
  uint64_t cur = last.load(std::memory_order_relaxed);
  for (;;) {
    // A new millisecond starts at sequence 0; within one the sequence counts up and carries
    // into the next millisecond when full.
    const uint64_t cand = std::max(cur + 1, now_ms << SeqBits);
    const uint64_t ms = cand >> SeqBits;
    if (ms > max_ms) return NextResult{Step::kExhausted, 0};
    if (ms > now_ms + max_lead_ms) return NextResult{Step::kWait, ms - max_lead_ms - now_ms};
    if (last.compare_exchange_weak(cur, cand, std::memory_order_acq_rel,
                                   std::memory_order_relaxed))
      return NextResult{Step::kIssued, cand};
  }
}

}  // namespace snowflake
