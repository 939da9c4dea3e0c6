// sno (github.com/muyo/sno): 10 bytes, big-endian: 39 bits of time in 4 ms units since
// 2010-01-01 00:00:00 UTC, 1 tick-tock bit, 8 bits of metabyte, 16 of partition and 16 of
// sequence. Text: 16 characters of 23456789abcdefghijklmnopqrstuvwx, 5 bits each in byte
// order, so that text order is byte order; the canonical form is [2-9a-x]{16}, and 80 bits
// fill 16 characters exactly, so every such text is a sno.
#pragma once
#include "core/pg_free.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::sno {

constexpr size_t kBytes = 10;
constexpr size_t kTextLen = 16;
constexpr int64_t kEpochUnixMs = int64_t{1262304000} * 1000;
constexpr int64_t kUnitMs = 4;
constexpr uint64_t kMaxUnits = (uint64_t{1} << 39) - 1;

// The outcome of reading a text; position (0-based) is the first byte not of the alphabet
// (kBadCharacter; with kBadLength too, or len when there is none), so that a caller can tell
// a text of 16 characters, some of them of more than one byte, from one of another length.
struct TextParse {
  enum Status : uint8_t { kOk, kBadLength, kBadCharacter } status;
  size_t position;
};

void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept;
TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept;

// bytea's hex text of the 10 bytes: \x and 20 hexadecimal digits of either case, what a driver
// sends as text for a byte string it has no type for (pgx for muyo/sno's driver value).
constexpr size_t kHexTextLen = 2 + 2 * kBytes;
inline bool is_hex_text(const char *text, size_t len) noexcept {
  return len >= 2 && text[0] == '\\' && text[1] == 'x';
}
bool decode_hex(const char *text, size_t len, uint8_t out[kBytes]) noexcept;

struct Fields {
  uint64_t units;  // 4 ms units since kEpochUnixMs, 0 to kMaxUnits
  bool tick;
  uint8_t meta;
  uint16_t partition;
  uint16_t sequence;
};

Fields fields(const uint8_t id[kBytes]) noexcept;
// Fields out of range are cut to their width.
void compose(const Fields &f, uint8_t out[kBytes]) noexcept;

inline int64_t units_to_unix_ms(uint64_t units) noexcept {
  return kEpochUnixMs + static_cast<int64_t>(units) * kUnitMs;
}

// The lowest sno of the 4 ms unit that holds unix_ms (every other field 0); false where no
// sno holds that time (before 2010-01-01 or after 2079-09-07 15:47:35.551 UTC).
bool at_unix_ms(int64_t unix_ms, uint8_t out[kBytes]) noexcept;

}  // namespace snowflake::sno
