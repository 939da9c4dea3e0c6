// The server's sno stream: one 64-bit word, (4 ms unit << 16) | sequence of the last sno
// issued, advanced by generator.hpp's next_state as a snowflake shard is, so that snos are
// strictly increasing in issue order across every backend. A full unit carries into the next
// one (ahead of the clock, within snowflake.max_lead) instead of sno's tick-tock bit, which
// would make the snos after a clock regression sort before the earlier ones. The metabyte is
// per call and no part of the word: two snos never share (unit, sequence), whatever their meta.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"
#include "core/id128.hpp"
#include "core/sno_codec.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake::sno {

constexpr int kSeqBits = 16;

// The stream's limits in units, from the stream's limits in Unix milliseconds: the lead, and
// the reservation (every value issued has a time below reserved_unix_ms; a unit may be issued
// only when the reservation covers all of its 4 ms, so the unit must end by then).
inline Limits unit_limits(uint64_t max_lead_ms, uint64_t reserved_unix_ms) noexcept {
  const uint64_t epoch = static_cast<uint64_t>(kEpochUnixMs);
  const uint64_t reserved = reserved_unix_ms > epoch ? (reserved_unix_ms - epoch) / kUnitMs : 0;
  return Limits{max_lead_ms / kUnitMs, kMaxUnits, reserved};
}

// The Unix millisecond that the reservation must exceed for unit to be issued: the unit's last.
inline uint64_t unit_end_unix_ms(uint64_t unit) noexcept {
  return static_cast<uint64_t>(kEpochUnixMs) + unit * kUnitMs + (kUnitMs - 1);
}

// The next sno of the stream at the clock now_unix_ms (at or after kEpochUnixMs). kIssued: the
// new word; kWait: milliseconds to wait for the clock; kReserve: the Unix millisecond that the
// reservation must exceed.
inline NextResult next(std::atomic<uint64_t> &last, uint64_t now_unix_ms, uint64_t max_lead_ms,
                       uint64_t reserved_unix_ms) noexcept {
  const uint64_t now_units = (now_unix_ms - static_cast<uint64_t>(kEpochUnixMs)) / kUnitMs;
  NextResult r = next_state<kSeqBits>(last, now_units, unit_limits(max_lead_ms, reserved_unix_ms));
  if (r.step == Step::kWait)
    r.value *= kUnitMs;
  else if (r.step == Step::kReserve)
    r.value = unit_end_unix_ms(r.value);
  return r;
}

// The sno of a word of the stream, with the call's metabyte and the server's partition; the
// tick-tock bit is 0. On every call: the first 64 of the 80 bits (39 of unit, the tick bit,
// 8 of metabyte, 16 of partition) in one big-endian store, then the sequence.
inline void compose_issued(uint64_t word, uint8_t meta, uint16_t partition,
                           uint8_t out[kBytes]) noexcept {
  const uint64_t top = (word >> kSeqBits & kMaxUnits) << 25 | uint64_t{meta} << 16 | partition;
  store_be64(out, top);
  out[8] = static_cast<uint8_t>(word >> 8);
  out[9] = static_cast<uint8_t>(word);
}

// The latest Unix millisecond a word's sno covers (0 for none): what the reservation must stay
// above after a restart.
inline uint64_t word_high_unix_ms(uint64_t word) noexcept {
  return word == 0 ? 0 : unit_end_unix_ms(word >> kSeqBits);
}

}  // namespace snowflake::sno
