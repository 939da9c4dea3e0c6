#include "ulid_codec.hpp"

#include "id128.hpp"

namespace snowflake {

namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

struct DecodeTable {
  int8_t v[256];
  constexpr DecodeTable() : v() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    for (int i = 0; i < 32; ++i) {
      const char c = kAlphabet[i];
      v[static_cast<unsigned char>(c)] = static_cast<int8_t>(i);
      if (c >= 'A' && c <= 'Z') v[static_cast<unsigned char>(c - 'A' + 'a')] = static_cast<int8_t>(i);
    }
  }
};
constexpr DecodeTable kDecode;

}  // namespace

void ulid_encode(const uint8_t in[16], char out[kUlidTextLen]) noexcept {
  u128 v = load_be128(in);
  for (int i = kUlidTextLen - 1; i >= 0; --i) {
    out[i] = kAlphabet[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
}

UlidParse ulid_decode(const char *text, size_t len, uint8_t out[16]) noexcept {
  if (len != kUlidTextLen) return UlidParse::kBadLength;
  u128 v = 0;
  for (size_t i = 0; i < kUlidTextLen; ++i) {
    const int8_t d = kDecode.v[static_cast<unsigned char>(text[i])];
    if (d < 0) return UlidParse::kBadCharacter;
    v = (v << 5) | static_cast<unsigned>(d);
  }
  // 26 characters hold 130 bits: the first may use only its low 3.
  if (kDecode.v[static_cast<unsigned char>(text[0])] > 7) return UlidParse::kOverflow;
  store_be128(out, v);
  return UlidParse::kOk;
}

}  // namespace snowflake
