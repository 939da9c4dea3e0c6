// The text and binary forms of two IDs of more than 64 bits that we decode:
//   MongoDB ObjectId: 12 bytes, 24 hex digits: 4 bytes of big-endian Unix seconds, 5 random
//     bytes drawn once per process (in older drivers, 3 of machine and 2 of process id),
//     and a 3-byte big-endian counter that starts at a random value.
//   KSUID (Segment): 20 bytes, 27 characters of base62 (0-9, A-Z, a-z, in that order): 4
//     bytes of big-endian seconds since 1400000000 (2014-05-13 16:53:20 UTC), then a 16-byte
//     random payload.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::foreign {

constexpr size_t kObjectIdBytes = 12;
constexpr size_t kObjectIdTextLen = 24;
constexpr size_t kKsuidBytes = 20;
constexpr size_t kKsuidTextLen = 27;
constexpr int64_t kKsuidEpochUnixS = 1400000000;
constexpr size_t kObjectIdRandomOffset = 4;
constexpr size_t kObjectIdRandomBytes = 5;
constexpr size_t kKsuidPayloadOffset = 4;
constexpr size_t kKsuidPayloadBytes = 16;
static_assert(kObjectIdRandomOffset + kObjectIdRandomBytes + 3 == kObjectIdBytes,
              "time, random, counter");
static_assert(kKsuidPayloadOffset + kKsuidPayloadBytes == kKsuidBytes, "time, payload");

enum class Parse : uint8_t { kOk, kBadLength, kBadCharacter, kOverflow };

// 24 hex digits, either case.
Parse objectid_from_hex(const char *text, size_t len, uint8_t out[kObjectIdBytes]) noexcept;
// 27 base62 characters, at most "aWgEPTl1tmebfsQzFP4bxwgy80V" (2^160 - 1).
Parse ksuid_from_base62(const char *text, size_t len, uint8_t out[kKsuidBytes]) noexcept;

inline uint32_t load_be32(const uint8_t *p) noexcept {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The time each holds, in Unix seconds.
inline int64_t objectid_unix_s(const uint8_t id[kObjectIdBytes]) noexcept { return load_be32(id); }
inline int64_t ksuid_unix_s(const uint8_t id[kKsuidBytes]) noexcept {
  return kKsuidEpochUnixS + load_be32(id);
}

// An ObjectId's counter, 0 to 2^24 - 1.
inline uint32_t objectid_counter(const uint8_t id[kObjectIdBytes]) noexcept {
  return uint32_t{id[9]} << 16 | uint32_t{id[10]} << 8 | id[11];
}

}  // namespace snowflake::foreign
