#include "core/foreign_codec.hpp"

namespace snowflake::foreign {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int base62_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  if (c >= 'a' && c <= 'z') return c - 'a' + 36;
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

Parse ksuid_from_base62(const char *text, size_t len, uint8_t out[kKsuidBytes]) noexcept {
  if (len != kKsuidTextLen) return Parse::kBadLength;
  // The 160-bit value as five 32-bit words, most significant first: value = value * 62 + d.
  uint32_t words[5] = {};
  for (size_t i = 0; i < len; ++i) {
    const int d = base62_value(text[i]);
    if (d < 0) return Parse::kBadCharacter;
    uint64_t carry = static_cast<uint64_t>(d);
    for (int w = 4; w >= 0; --w) {
      const uint64_t v = uint64_t{words[w]} * 62 + carry;
      words[w] = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) return Parse::kOverflow;
  }
  for (int w = 0; w < 5; ++w)
    for (int b = 0; b < 4; ++b) out[4 * w + b] = static_cast<uint8_t>(words[w] >> (24 - 8 * b));
  return Parse::kOk;
}

}  // namespace snowflake::foreign
