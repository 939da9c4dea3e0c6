// The server's streams of one-second IDs: rsxid() (rs/xid's 12-byte xid) and ksuid()
// (segmentio/ksuid's 20-byte KSUID). Both begin with 32 bits of seconds, so one stream serves
// both, parameterised by its layout's origin (Unix 0 for an xid, 1,400,000,000 for a KSUID).
// Per kind, one stream per shard (stream_shard.hpp's table), each a 64-bit word, (second since
// the origin << 24) | counter of the last value issued, advanced by generator.hpp's next_state
// as a snowflake shard is: values of one shard strictly increase in issue order across every
// backend; values of different shards are ordered by their second only. A full second
// (16,777,216 values) carries into the next one, ahead of the clock, within snowflake.max_lead
// in whole seconds (1 at the default 1,024 ms).
//
// The layouts (what each byte holds):
//   xid    4 bytes Unix seconds | 3 bytes machine id: the session's shard (0 to 8191, big
//          endian, so its first byte is 0) | 2 bytes process id: the low 16 bits of the
//          postmaster's PID, fixed while the server runs | 3 bytes the stream's counter
//   KSUID  4 bytes seconds since 1,400,000,000 | payload: 2 bytes the session's shard | 3 bytes
//          the stream's counter | 11 random bytes, fresh for every value
// The shard is snowflake.shard_id (with a range of shards, its first), or in lease mode the
// first shard of the range leased, as sno()'s partition. Any 12 or 20 bytes are a valid xid or
// KSUID, so readers of the formats accept these.
//
// Durability with a unit of a second. The reservation (and in lease mode the lease's mark) runs
// about a second ahead of the clock; sno's rule, a unit is issued only once the reservation
// covers its last millisecond, would stall every second at its boundary. Here a second s is
// issued once the reservation covers its FIRST millisecond (s * 1000 below the limit: at the
// clock's second, that is the time of issue or earlier), and every stream of a kind starts from
// the kind's one floor, in the first second that begins at or after it:
//   - a value's time, for the reservation, the lease's mark and the reservation left at exit,
//     is the first millisecond of its second (word_high_unix_ms), of the highest word of every
//     shard's stream (ShardStreamsT::high_word);
//   - every floor F a stream starts from is above that time for every value issued before:
//     the reservation loaded at start (at a clean stop lowered to just above the last value's
//     time, never below), one replayed from WAL, the lease's mark read by a new holder (the
//     final mark of a clean stop is just above the last value's time), so no earlier value is
//     in a second at or after ceil(F / 1000): the stream starts there (floor_unix_ms);
//   - that second begins at most 999 ms past the clock, which is at or past F: within the
//     default max_lead, so a start, even with the clock minutes behind, issues at full pace.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"
#include "core/stream_shard.hpp"
#include "core/id128.hpp"
#include "core/ksuid_codec.hpp"
#include "core/xid_codec.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake::seconds {

constexpr int kCounterBits = 24;
constexpr uint64_t kMaxCounter = (uint64_t{1} << kCounterBits) - 1;
constexpr uint64_t kMaxSeconds = 0xffffffff;  // the 32-bit time field's last second

// A layout's time field: seconds since origin_unix_s, at most kMaxSeconds.
struct Format {
  uint64_t origin_unix_s;
  uint64_t origin_unix_ms() const noexcept { return origin_unix_s * 1000; }
};
constexpr Format kXid{0};                     // ends 2106-02-07 06:28:15 UTC
constexpr Format kKsuid{ksuid::kEpochUnixS};  // ends 2150-06-19 23:21:35 UTC

constexpr size_t kXidBytes = xid::kBytes;
constexpr size_t kKsuidBytes = ksuid::kBytes;
constexpr size_t kKsuidRandomBytes = 11;

// A kind's streams: one per shard (stream_shard.hpp), and the floor they all start from.
template <typename Lock>
struct StreamsT {
  ShardStreamsT<Lock> shards;
  // No value of an earlier run or holder is in a second that begins at or after this Unix
  // millisecond's: every stream starts at or after the first second that begins there.
  alignas(64) std::atomic<uint64_t> floor_unix_ms;

  void init() noexcept {
    shards.init();
    floor_unix_ms.store(0);
  }
};

inline uint64_t ceil_div_1000(uint64_t v) noexcept { return v / 1000 + (v % 1000 != 0); }

// The first second (since the origin) that begins at or after unix_ms.
inline uint64_t first_second_from(uint64_t unix_ms, const Format &f) noexcept {
  return unix_ms > f.origin_unix_ms() ? ceil_div_1000(unix_ms - f.origin_unix_ms()) : 0;
}

// The time of a word's value (0 for none): the first millisecond of its second. The reservation
// and the lease's mark must exceed it before the value is issued, and stay above it after.
inline uint64_t word_high_unix_ms(uint64_t word, const Format &f) noexcept {
  return word == 0 ? 0 : f.origin_unix_ms() + (word >> kCounterBits) * 1000;
}

// What the reservation (and mark) is asked to cover after a value is issued at the clock
// now_unix_ms: the later of the value's time and the clock. The value's time stays at its
// second's start for a whole second; following the clock keeps the reservation ahead of it, so
// that the next second's first millisecond is covered before the clock reaches it.
inline uint64_t issued_high_unix_ms(uint64_t word, uint64_t now_unix_ms, const Format &f) noexcept {
  return std::max(word_high_unix_ms(word, f), now_unix_ms);
}

// Raises the stream's floor (never lowers it): no value from now on in a second that begins
// before unix_ms. Safe to repeat.
inline void raise_floor(std::atomic<uint64_t> &floor_unix_ms, uint64_t unix_ms) noexcept {
  uint64_t cur = floor_unix_ms.load(std::memory_order_relaxed);
  while (cur < unix_ms && !floor_unix_ms.compare_exchange_weak(
                              cur, unix_ms, std::memory_order_seq_cst, std::memory_order_relaxed)) {
  }
}

// A new lease range's floor: above the holder's mark (the last holder's values are below it),
// and past the second of every value this server issued before, on any shard (not needed for
// the order of one shard's values, which the streams keep; kept so that a new range's values
// sort above every value the server issued before it). Called with generation closed, so every
// value returned before is in a stream's word.
template <typename Lock>
inline void raise_floor_for_range(StreamsT<Lock> &s, uint64_t mark_unix_ms,
                                  const Format &f) noexcept {
  const uint64_t last = s.shards.high_word(std::memory_order_seq_cst);
  const uint64_t after_last =
      last == 0 ? 0 : f.origin_unix_ms() + ((last >> kCounterBits) + 1) * 1000;
  raise_floor(s.floor_unix_ms, std::max(mark_unix_ms, after_last));
}

// The next value of a stream (its word last, its kind's floor) at the clock now_unix_ms (at or
// after the origin), every value staying below limit_unix_ms (the reservation, and the lease's
// mark). kIssued: the new word; kWait: milliseconds to let the clock move; kReserve: the Unix
// millisecond the reservation must exceed (the second's first).
inline NextResult next(std::atomic<uint64_t> &last, const std::atomic<uint64_t> &floor,
                       uint64_t now_unix_ms, uint64_t max_lead_ms, uint64_t limit_unix_ms,
                       const Format &f) noexcept {
  const uint64_t now_ms = now_unix_ms - f.origin_unix_ms();
  const uint64_t now_s = now_ms / 1000;
  const uint64_t lead_s = max_lead_ms / 1000;
  // A floor at or before the clock's second's start (after the first second of a run, always)
  // asks nothing: one comparison instead of a division.
  const uint64_t floor_unix_ms = floor.load(std::memory_order_acquire);
  const uint64_t from_s = floor_unix_ms <= f.origin_unix_ms() + now_s * 1000
                              ? now_s
                              : std::max(now_s, first_second_from(floor_unix_ms, f));
  // Within a second of the clock after a start (the clock is at or past the floor); further
  // only right after a new lease range, past a stream that ran at its lead.
  if (unlikely_(from_s > now_s + lead_s))
    return NextResult{Step::kWait, (from_s - lead_s) * 1000 - now_ms};
  // Second s is covered when s * 1000 is below the limit: s < ceil(limit / 1000).
  const Limits limits{now_s + lead_s - from_s, kMaxSeconds, first_second_from(limit_unix_ms, f)};
  NextResult r = next_state<kCounterBits>(last, from_s, limits);
  if (r.step == Step::kWait)
    r.value = (now_s + r.value) * 1000 - now_ms;  // until the clock's second lets it
  else if (r.step == Step::kReserve)
    r.value = f.origin_unix_ms() + r.value * 1000;
  return r;
}

// The xid of a word of the stream, on its shard, with the postmaster's PID: the time,
// machine id and process id in one big-endian 64-bit store, then the counter.
inline void compose_xid(uint64_t word, uint32_t shard, uint32_t pid,
                        uint8_t out[kXidBytes]) noexcept {
  store_be64(out,
             (word >> kCounterBits) << 32 | uint64_t{shard & 0xffffff} << 8 | (pid >> 8 & 0xff));
  out[8] = static_cast<uint8_t>(pid);
  out[9] = static_cast<uint8_t>(word >> 16);
  out[10] = static_cast<uint8_t>(word >> 8);
  out[11] = static_cast<uint8_t>(word);
}

// The first 9 bytes of the KSUID of a word of the stream, on its shard: the time, the
// shard and the counter (one big-endian 64-bit store, then the counter's last byte). The caller
// puts kKsuidRandomBytes random bytes at kKsuidRandomOffset.
constexpr size_t kKsuidRandomOffset = 9;
inline void compose_ksuid(uint64_t word, uint32_t shard, uint8_t out[kKsuidBytes]) noexcept {
  store_be64(out, (word >> kCounterBits) << 32 | uint64_t{shard & 0xffff} << 16 |
                      (word & kMaxCounter) >> 8);
  out[8] = static_cast<uint8_t>(word);
}

}  // namespace snowflake::seconds
