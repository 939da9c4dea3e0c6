#include "core/ksuid_codec.hpp"

#include "core/id128.hpp"

namespace snowflake::ksuid {

namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  if (c >= 'a' && c <= 'z') return c - 'a' + 36;
  return -1;
}

}  // namespace

// The 160-bit number as five 32-bit words, most significant first, divided by 62 once per
// character, from the last.
void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept {
  uint32_t words[5];
  for (int w = 0; w < 5; ++w)
    words[w] = uint32_t{in[4 * w]} << 24 | uint32_t{in[4 * w + 1]} << 16 |
               uint32_t{in[4 * w + 2]} << 8 | in[4 * w + 3];
  for (size_t i = kTextLen; i-- > 0;) {
    uint64_t rest = 0;
    for (int w = 0; w < 5; ++w) {
      const uint64_t v = rest << 32 | words[w];
      words[w] = static_cast<uint32_t>(v / 62);
      rest = v % 62;
    }
    out[i] = kAlphabet[rest];
  }
}

TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept {
  size_t bad = 0;
  while (bad < len && value(text[bad]) >= 0) ++bad;
  if (len != kTextLen) return {TextParse::kBadLength, bad};
  if (bad != len) return {TextParse::kBadCharacter, bad};
  // value = value * 62 + digit over five 32-bit words; a carry out of the top word is a
  // number of more than 160 bits.
  uint32_t words[5] = {};
  for (size_t i = 0; i < len; ++i) {
    uint64_t carry = static_cast<uint64_t>(value(text[i]));
    for (int w = 4; w >= 0; --w) {
      const uint64_t v = uint64_t{words[w]} * 62 + carry;
      words[w] = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) return {TextParse::kOverflow, 0};
  }
  for (int w = 0; w < 5; ++w)
    for (int b = 0; b < 4; ++b) out[4 * w + b] = static_cast<uint8_t>(words[w] >> (24 - 8 * b));
  return {TextParse::kOk, 0};
}

bool at_unix_s(int64_t unix_s, uint8_t out[kBytes]) noexcept {
  return lowest_of_second(unix_s, kEpochUnixS, out, kBytes);
}

}  // namespace snowflake::ksuid
