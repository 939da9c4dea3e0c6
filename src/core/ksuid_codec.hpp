// KSUID (github.com/segmentio/ksuid): 20 bytes, big-endian: 4 bytes of seconds since
// 1400000000 (2014-05-13 16:53:20 UTC), then a 16-byte random payload. Text: the 160-bit
// number in 27 characters of base62 (0-9, A-Z, a-z, in that order), most significant first,
// zero padded, so that text order under a byte-wise collation is byte order. 62^27 > 2^160:
// a text above "aWgEPTl1tmebfsQzFP4bxwgy80V" (2^160 - 1) is no KSUID.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::ksuid {

constexpr size_t kBytes = 20;
constexpr size_t kTextLen = 27;
constexpr int64_t kEpochUnixS = 1400000000;
constexpr size_t kPayloadOffset = 4;
constexpr size_t kPayloadBytes = 16;
constexpr char kMaxText[] = "aWgEPTl1tmebfsQzFP4bxwgy80V";
static_assert(kPayloadOffset + kPayloadBytes == kBytes, "time, payload");

// position (0-based): the first byte not of the alphabet (kBadCharacter; with kBadLength too,
// or len when there is none), so that a caller can tell a text of 27 characters, some of more
// than one byte, from one of another length; kOverflow is a text of 27 base62 characters
// above kMaxText.
struct TextParse {
  enum Status : uint8_t { kOk, kBadLength, kBadCharacter, kOverflow } status;
  size_t position;
};

void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept;
TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept;

// The seconds field (since kEpochUnixS) and the time in Unix seconds.
inline uint32_t stamp(const uint8_t id[kBytes]) noexcept {
  return uint32_t{id[0]} << 24 | uint32_t{id[1]} << 16 | uint32_t{id[2]} << 8 | id[3];
}
inline int64_t unix_s(const uint8_t id[kBytes]) noexcept { return kEpochUnixS + stamp(id); }

// The lowest KSUID of the second that holds unix_s (payload all zero); false where no KSUID
// holds that second (before 2014-05-13 16:53:20 UTC or after 2150-06-19 23:21:35 UTC).
bool at_unix_s(int64_t unix_s, uint8_t out[kBytes]) noexcept;

}  // namespace snowflake::ksuid
