// The text and binary forms of two 128-bit-plus IDs whose time we read:
//   MongoDB ObjectId: 12 bytes, 24 hex digits; its first 4 bytes are big-endian Unix seconds.
//   KSUID (Segment): 20 bytes, 27 characters of base62 (0-9, A-Z, a-z, in that order); its
//     first 4 bytes are big-endian seconds since 1400000000 (2014-05-13 16:53:20 UTC).
#pragma once
#include "pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::foreign {

constexpr size_t kObjectIdBytes = 12;
constexpr size_t kObjectIdTextLen = 24;
constexpr size_t kKsuidBytes = 20;
constexpr size_t kKsuidTextLen = 27;
constexpr int64_t kKsuidEpochUnixS = 1400000000;

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

}  // namespace snowflake::foreign
