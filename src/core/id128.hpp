// The two 128-bit kinds: RFC 9562 UUIDv7 and ULID. Both are 16 big-endian bytes that begin
// with 48 bits of Unix milliseconds, so byte order is time order. Layouts are fixed by their
// specifications.
//
// UUIDv7 (RFC 9562 section 5.7), as generated here (section 6.2, method 1: a fixed-length
// dedicated counter in rand_a):
//   48 bits unix_ts_ms | 4 bits version 0111 | 12 bits counter (rand_a)
//   | 2 bits variant 10 | 62 bits from the CSPRNG (rand_b)
// The counter starts at 0 in each new millisecond; when its 4,096 values are used up it
// carries into the millisecond (section 6.2 allows the timestamp to run ahead).
//
// ULID (github.com/ulid/spec): 48 bits of Unix milliseconds | 80 random bits. Within one
// millisecond the next value is the previous plus one; an 80-bit overflow carries into the
// millisecond instead of failing.
#pragma once
#include "pg_free.hpp"

#include "generator.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>

namespace snowflake {

using u128 = unsigned __int128;

constexpr uint64_t kMaxUnixMs48 = (uint64_t{1} << 48) - 1;
constexpr int kUuidCounterBits = 12;
constexpr int kUlidRandomBits = 80;
constexpr uint64_t kRandB62Mask = (uint64_t{1} << 62) - 1;

struct Bytes16 {
  uint8_t b[16];
};

inline u128 load_be128(const uint8_t *p) noexcept {
  u128 v = 0;
  for (int i = 0; i < 16; ++i) v = (v << 8) | p[i];
  return v;
}

inline void store_be128(uint8_t *p, u128 v) noexcept {
  for (int i = 15; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

// ---- UUIDv7

inline void uuidv7_compose(uint8_t out[16], uint64_t unix_ms, uint32_t rand_a12,
                           uint64_t rand_b62) noexcept {
  const u128 v = (u128{unix_ms & kMaxUnixMs48} << 80) | (u128{0x7} << 76) |
                 (u128{rand_a12 & 0xfffu} << 64) | (u128{0x2} << 62) | (rand_b62 & kRandB62Mask);
  store_be128(out, v);
}

// The version of an RFC 9562 UUID, or -1 when its variant is not RFC 9562's (10xx).
inline int uuid_version(const uint8_t u[16]) noexcept {
  if ((u[8] & 0xc0) != 0x80) return -1;
  return u[6] >> 4;
}

inline uint64_t uuid_unix_ms(const uint8_t u[16]) noexcept {
  uint64_t ms = 0;
  for (int i = 0; i < 6; ++i) ms = (ms << 8) | u[i];
  return ms;
}

// ---- ULID

inline void ulid_compose(uint8_t out[16], uint64_t unix_ms, u128 random80) noexcept {
  store_be128(out, (u128{unix_ms & kMaxUnixMs48} << kUlidRandomBits) |
                       (random80 & ((u128{1} << kUlidRandomBits) - 1)));
}

// ---- ULID generator state: 128 bits change as one, under a spinlock held for a few
// instructions that cannot fail.

struct UlidSlot {
  std::atomic<uint32_t> lock;
  uint64_t hi;  // the last value issued, 0 before any
  uint64_t lo;

  void init() noexcept {
    lock.store(0);
    hi = lo = 0;
  }
};

void spin_lock(std::atomic<uint32_t> &lock) noexcept;

inline void spin_unlock(std::atomic<uint32_t> &lock) noexcept {
  lock.store(0, std::memory_order_release);
}

struct UlidNext {
  Step step;
  u128 value;        // kIssued: the new value
  uint64_t wait_ms;  // kWait: milliseconds until the clock allows more
};

// random80: fresh random bits, used when this call starts a new millisecond.
inline UlidNext ulid_next(UlidSlot &slot, uint64_t now_ms, u128 random80,
                          uint64_t max_lead_ms) noexcept {
  const u128 fresh = (u128{now_ms} << kUlidRandomBits) |
                     (random80 & ((u128{1} << kUlidRandomBits) - 1));
  spin_lock(slot.lock);
  const u128 last = (u128{slot.hi} << 64) | slot.lo;
  const u128 cand = (last >> kUlidRandomBits) < now_ms ? fresh : last + 1;
  const uint64_t ms = static_cast<uint64_t>(cand >> kUlidRandomBits);
  if (ms > kMaxUnixMs48 || cand < last) {
    spin_unlock(slot.lock);
    return UlidNext{Step::kExhausted, 0, 0};
  }
  if (ms > now_ms + max_lead_ms) {
    spin_unlock(slot.lock);
    return UlidNext{Step::kWait, 0, ms - max_lead_ms - now_ms};
  }
  slot.hi = static_cast<uint64_t>(cand >> 64);
  slot.lo = static_cast<uint64_t>(cand);
  spin_unlock(slot.lock);
  return UlidNext{Step::kIssued, cand, 0};
}

}  // namespace snowflake
