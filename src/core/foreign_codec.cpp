#include "core/foreign_codec.hpp"

namespace snowflake::foreign {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Parse objectid_from_hex(const char *text, size_t len, uint8_t out[kObjectIdBytes]) noexcept {
  if (len != kObjectIdTextLen) return Parse::kBadLength;
  for (size_t i = 0; i < kObjectIdBytes; ++i) {
    const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return Parse::kBadCharacter;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return Parse::kOk;
}

}  // namespace snowflake::foreign
