#include "core/ulid_codec.hpp"

#include "core/base32.hpp"

#include "core/id128.hpp"

namespace snowflake {

namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

constexpr Base32Table kDecode(kAlphabet, true);

}  // namespace

namespace {

// 26 characters of 5 bits from two 64-bit halves, unrolled: the first takes the top 3 bits,
// the fourteenth straddles the halves.
void encode_with(const char *alphabet, const uint8_t in[16], char out[kUlidTextLen]) noexcept {
  const uint64_t hi = load_be64(in);
  const uint64_t lo = load_be64(in + 8);
  out[0] = alphabet[hi >> 61];
  for (int i = 1; i <= 12; ++i) out[i] = alphabet[(hi >> (61 - 5 * i)) & 31];
  out[13] = alphabet[((hi & 1) << 4) | (lo >> 60)];
  for (int i = 0; i < 12; ++i) out[14 + i] = alphabet[(lo >> (55 - 5 * i)) & 31];
}

}  // namespace

void ulid_encode(const uint8_t in[16], char out[kUlidTextLen]) noexcept {
  encode_with(kAlphabet, in, out);
}

void ulid_encode_lower(const uint8_t in[16], char out[kUlidTextLen]) noexcept {
  static constexpr char kLower[] = "0123456789abcdefghjkmnpqrstvwxyz";
  encode_with(kLower, in, out);
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
