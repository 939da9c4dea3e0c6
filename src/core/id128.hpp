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
#include "core/pg_free.hpp"

#include "core/generator.hpp"

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

inline uint64_t load_be64(const uint8_t *p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline void store_be64(uint8_t *p, uint64_t v) noexcept {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, sizeof v);
}

// The lowest ID of a layout of n bytes that begins with 32 bits of seconds since origin_unix_s
// (an xid's, a KSUID's): that second, then zeros. False outside the 32 bits.
inline bool lowest_of_second(int64_t unix_s, int64_t origin_unix_s, uint8_t *out,
                             size_t n) noexcept {
  if (unix_s < origin_unix_s || unix_s - origin_unix_s > int64_t{UINT32_MAX}) return false;
  std::memset(out, 0, n);
  store_be64(out, static_cast<uint64_t>(unix_s - origin_unix_s) << 32);
  return true;
}

inline u128 load_be128(const uint8_t *p) noexcept {
  return (u128{load_be64(p)} << 64) | load_be64(p + 8);
}

inline void store_be128(uint8_t *p, u128 v) noexcept {
  store_be64(p, static_cast<uint64_t>(v >> 64));
  store_be64(p + 8, static_cast<uint64_t>(v));
}

// ---- UUIDv7

inline void uuidv7_compose(uint8_t out[16], uint64_t unix_ms, uint32_t rand_a12,
                           uint64_t rand_b62) noexcept {
  store_be64(out, (unix_ms & kMaxUnixMs48) << 16 | uint64_t{0x7} << 12 | (rand_a12 & 0xfffu));
  store_be64(out + 8, uint64_t{0x2} << 62 | (rand_b62 & kRandB62Mask));
}

// The version of an RFC 9562 UUID, or -1 when its variant is not RFC 9562's (10xx).
inline int uuid_version(const uint8_t u[16]) noexcept {
  if ((u[8] & 0xc0) != 0x80) return -1;
  return u[6] >> 4;
}

inline uint64_t uuid_unix_ms(const uint8_t u[16]) noexcept { return load_be64(u) >> 16; }

// ---- ULID

inline void ulid_compose(uint8_t out[16], uint64_t unix_ms, u128 random80) noexcept {
  store_be128(out, (u128{unix_ms & kMaxUnixMs48} << kUlidRandomBits) |
                       (random80 & ((u128{1} << kUlidRandomBits) - 1)));
}

// ---- ULID generator state: 128 bits change as one, under a spinlock held for a few
// instructions that cannot fail. The lock is a template parameter: in the server it is
// PostgreSQL's own spinlock (the glue's PgSpinLock, with its stuck-lock detection); the
// unit tests use SpinLock below. A Lock has init(), acquire() and release(), all noexcept.

// A test-and-set spinlock on one word, for the core's unit tests and tools.
struct SpinLock {
  std::atomic<uint32_t> word;

  void init() noexcept { word.store(0); }
  void acquire() noexcept {
    if (word.exchange(1, std::memory_order_acquire) != 0) acquire_contended();
  }
  void release() noexcept { word.store(0, std::memory_order_release); }

 private:
  void acquire_contended() noexcept;
};

template <typename Lock>
struct UlidSlotT {
  Lock lock;
  // The last value issued, 0 before any. Written under the lock; hi is also read without it,
  // as a hint of whether the next value starts a new millisecond.
  std::atomic<uint64_t> hi;
  std::atomic<uint64_t> lo;

  void init() noexcept {
    lock.init();
    hi.store(0);
    lo.store(0);
  }

  // Whether a value issued now would probably start a new millisecond, and so need random
  // bits (drawn before taking the lock).
  bool likely_new_ms(uint64_t now_ms) const noexcept {
    return (hi.load(std::memory_order_relaxed) >> (kUlidRandomBits - 64)) < now_ms;
  }
};

struct UlidNext {
  Step step;
  u128 value;        // kIssued: the new value
  uint64_t wait_ms;  // kWait: milliseconds until the clock allows more; kReserve: the
                     // millisecond that the reservation must cover
};

// random80: random bits for a value that starts a new millisecond; when it starts one and
// have_random is false, nothing is issued and the step is kNeedRandom.
// wait_ms carries the millisecond to reserve for kReserve.
template <typename Lock>
inline UlidNext ulid_next(UlidSlotT<Lock> &slot, uint64_t now_ms, bool have_random, u128 random80,
                          const Limits &limits) noexcept {
  if (now_ms > limits.max_ms) return UlidNext{Step::kExhausted, 0, 0};
  const u128 fresh =
      (u128{now_ms} << kUlidRandomBits) | (random80 & ((u128{1} << kUlidRandomBits) - 1));
  slot.lock.acquire();
  const u128 last = (u128{slot.hi.load(std::memory_order_relaxed)} << 64) |
                    slot.lo.load(std::memory_order_relaxed);
  const bool new_ms = (last >> kUlidRandomBits) < now_ms;
  if (new_ms && !have_random) {
    slot.lock.release();
    return UlidNext{Step::kNeedRandom, 0, 0};
  }
  const u128 cand = new_ms ? fresh : last + 1;
  const uint64_t ms = static_cast<uint64_t>(cand >> kUlidRandomBits);
  if (ms > limits.max_ms || cand < last) {
    slot.lock.release();
    return UlidNext{Step::kExhausted, 0, 0};
  }
  if (ms > now_ms + limits.max_lead_ms) {
    slot.lock.release();
    return UlidNext{Step::kWait, 0, ms - limits.max_lead_ms - now_ms};
  }
  if (ms >= limits.reserved_ms) {
    slot.lock.release();
    return UlidNext{Step::kReserve, 0, ms};
  }
  slot.hi.store(static_cast<uint64_t>(cand >> 64), std::memory_order_relaxed);
  slot.lo.store(static_cast<uint64_t>(cand), std::memory_order_relaxed);
  slot.lock.release();
  return UlidNext{Step::kIssued, cand, 0};
}

}  // namespace snowflake
