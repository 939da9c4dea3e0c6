#include "core/typeid_codec.hpp"

#include "core/base32.hpp"
#include "core/id128.hpp"

#include <cstring>

namespace snowflake {

namespace {

constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

// Lower case alone decodes; upper case is told apart only to name the rule it breaks.
constexpr Base32Table kDecode(kAlphabet);

constexpr bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }

TypeidProblem check_suffix(const char *text, size_t len, uint8_t uuid[16]) noexcept {
  if (len != kTypeidSuffixLen) return TypeidProblem::kSuffixBadLength;
  u128 v = 0;
  for (size_t i = 0; i < kTypeidSuffixLen; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const int8_t d = kDecode.v[c];
    if (d < 0) {
      return is_upper(c) && kDecode.v[c - 'A' + 'a'] >= 0 ? TypeidProblem::kSuffixUppercase
                                                          : TypeidProblem::kSuffixBadCharacter;
    }
    v = (v << 5) | static_cast<unsigned>(d);
  }
  // 26 characters hold 130 bits, and the first two are the zeros put before the UUID's 128.
  if (kDecode.v[static_cast<unsigned char>(text[0])] > 7) return TypeidProblem::kSuffixOverflow;
  store_be128(uuid, v);
  return TypeidProblem::kOk;
}

}  // namespace

TypeidProblem typeid_check_prefix(const char *prefix, size_t len) noexcept {
  if (len == 0) return TypeidProblem::kOk;
  for (size_t i = 0; i < len; ++i) {
    const unsigned char c = static_cast<unsigned char>(prefix[i]);
    if (is_lower(c) || c == '_') continue;
    return is_upper(c) ? TypeidProblem::kPrefixUppercase : TypeidProblem::kPrefixBadCharacter;
  }
  if (prefix[0] == '_') return TypeidProblem::kPrefixStartsWithUnderscore;
  if (prefix[len - 1] == '_') return TypeidProblem::kPrefixEndsWithUnderscore;
  if (len > kTypeidMaxPrefixLen) return TypeidProblem::kPrefixTooLong;
  return TypeidProblem::kOk;
}

TypeidProblem typeid_encode(const char *prefix, size_t prefix_len, const uint8_t uuid[16],
                            char out[kTypeidMaxLen], size_t *out_len) noexcept {
  const TypeidProblem p = typeid_check_prefix(prefix, prefix_len);
  if (p != TypeidProblem::kOk) return p;
  size_t n = 0;
  if (prefix_len > 0) {
    std::memcpy(out, prefix, prefix_len);
    out[prefix_len] = '_';
    n = prefix_len + 1;
  }
  u128 v = load_be128(uuid);
  for (size_t i = kTypeidSuffixLen; i-- > 0;) {
    out[n + i] = kAlphabet[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
  *out_len = n + kTypeidSuffixLen;
  return TypeidProblem::kOk;
}

TypeidProblem typeid_decode(const char *text, size_t len, size_t *prefix_len,
                            uint8_t uuid[16]) noexcept {
  // The suffix has no underscore: the last one, if any, ends the prefix.
  size_t separator = len;
  for (size_t i = len; i-- > 0;) {
    if (text[i] == '_') {
      separator = i;
      break;
    }
  }
  size_t plen = 0;
  const char *suffix = text;
  size_t suffix_len = len;
  if (separator < len) {
    plen = separator;
    if (plen == 0) return TypeidProblem::kSeparatorWithoutPrefix;
    const TypeidProblem p = typeid_check_prefix(text, plen);
    if (p != TypeidProblem::kOk) return p;
    suffix = text + plen + 1;
    suffix_len = len - plen - 1;
  }
  const TypeidProblem p = check_suffix(suffix, suffix_len, uuid);
  if (p != TypeidProblem::kOk) return p;
  *prefix_len = plen;
  return TypeidProblem::kOk;
}

}  // namespace snowflake
