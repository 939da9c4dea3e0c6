// The text and binary forms of MongoDB's ObjectId, which we decode: 12 bytes, 24 hex digits:
// 4 bytes of big-endian Unix seconds, 5 random bytes drawn once per process (in older
// drivers, 3 of machine and 2 of process id), and a 3-byte big-endian counter that starts at a
// random value. (KSUIDs, a type of their own: ksuid_codec.hpp.)
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::foreign {

constexpr size_t kObjectIdBytes = 12;
constexpr size_t kObjectIdTextLen = 24;
constexpr size_t kObjectIdRandomOffset = 4;
constexpr size_t kObjectIdRandomBytes = 5;
static_assert(kObjectIdRandomOffset + kObjectIdRandomBytes + 3 == kObjectIdBytes,
              "time, random, counter");

enum class Parse : uint8_t { kOk, kBadLength, kBadCharacter };

// 24 hex digits, either case.
Parse objectid_from_hex(const char *text, size_t len, uint8_t out[kObjectIdBytes]) noexcept;

inline uint32_t load_be32(const uint8_t *p) noexcept {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The time it holds, in Unix seconds.
inline int64_t objectid_unix_s(const uint8_t id[kObjectIdBytes]) noexcept { return load_be32(id); }

// An ObjectId's counter, 0 to 2^24 - 1.
inline uint32_t objectid_counter(const uint8_t id[kObjectIdBytes]) noexcept {
  return uint32_t{id[9]} << 16 | uint32_t{id[10]} << 8 | id[11];
}

}  // namespace snowflake::foreign
