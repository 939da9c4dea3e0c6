// xid (github.com/rs/xid): 12 bytes, big-endian: 4 bytes of Unix seconds, a 3-byte machine
// id, a 2-byte process id and a 3-byte counter. Text: 20 characters of lower-case base32hex
// (0123456789abcdefghijklmnopqrstuv), 5 bits each from the first byte's top bit; the 20th
// character carries 1 bit and 4 of padding, so it is 0 or g (rs/xid refuses any other).
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::xid {

constexpr size_t kBytes = 12;
constexpr size_t kTextLen = 20;
constexpr size_t kMachineOffset = 4;
constexpr size_t kMachineBytes = 3;

// position (0-based): the first byte not of the alphabet (kBadCharacter; with kBadLength too,
// or len when there is none), or the last one when its padding bits are set (kBadPadding).
struct TextParse {
  enum Status : uint8_t { kOk, kBadLength, kBadCharacter, kBadPadding } status;
  size_t position;
};

void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept;
TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept;

inline uint32_t unix_s(const uint8_t id[kBytes]) noexcept {
  return uint32_t{id[0]} << 24 | uint32_t{id[1]} << 16 | uint32_t{id[2]} << 8 | id[3];
}
inline uint16_t pid(const uint8_t id[kBytes]) noexcept {
  return static_cast<uint16_t>(id[7] << 8 | id[8]);
}
inline uint32_t counter(const uint8_t id[kBytes]) noexcept {
  return uint32_t{id[9]} << 16 | uint32_t{id[10]} << 8 | id[11];
}

// The lowest xid of the second unix_s (machine, process and counter 0); false where no xid
// holds that second (before 1970 or after 2106-02-07 06:28:15 UTC).
bool at_unix_s(int64_t unix_s, uint8_t out[kBytes]) noexcept;

}  // namespace snowflake::xid
