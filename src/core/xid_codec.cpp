#include "core/xid_codec.hpp"

#include "core/id128.hpp"

#include "core/base32.hpp"

namespace snowflake::xid {

namespace {

constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuv";

constexpr Base32Table kDecode(kAlphabet);

}  // namespace

// Three blocks of 4 bytes (32 bits): a bit stream read 5 bits at a time, padded at the end.
void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept {
  uint64_t acc = 0;
  int bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < kBytes; ++i) {
    acc = acc << 8 | in[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[o++] = kAlphabet[(acc >> bits) & 31];
    }
  }
  out[o] = kAlphabet[(acc << (5 - bits)) & 31];
}

TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept {
  if (len != kTextLen) {
    size_t i = 0;
    while (i < len && kDecode.v[static_cast<unsigned char>(text[i])] >= 0) ++i;
    return {TextParse::kBadLength, i};
  }
  uint64_t acc = 0;
  int bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < kTextLen; ++i) {
    const int8_t d = kDecode.v[static_cast<unsigned char>(text[i])];
    if (d < 0) return {TextParse::kBadCharacter, i};
    acc = acc << 5 | static_cast<unsigned>(d);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      if (o < kBytes) out[o++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  // 100 bits read, 96 stored: the last 4 are padding.
  if ((acc & 15) != 0) return {TextParse::kBadPadding, kTextLen - 1};
  return {TextParse::kOk, 0};
}

bool at_unix_s(int64_t unix_s, uint8_t out[kBytes]) noexcept {
  return lowest_of_second(unix_s, 0, out, kBytes);
}

}  // namespace snowflake::xid
