#include "core/sno_codec.hpp"

#include "core/base32.hpp"

namespace snowflake::sno {

namespace {

constexpr char kAlphabet[] = "23456789abcdefghijklmnopqrstuvwx";

constexpr Base32Table kDecode(kAlphabet);

// The 10 bytes as an 80-bit number in two halves: hi the top 16 bits, lo the low 64.
struct U80 {
  uint64_t hi, lo;
};

U80 load(const uint8_t in[kBytes]) noexcept {
  U80 v{uint64_t{in[0]} << 8 | in[1], 0};
  for (size_t i = 2; i < kBytes; ++i) v.lo = v.lo << 8 | in[i];
  return v;
}

void store(U80 v, uint8_t out[kBytes]) noexcept {
  out[0] = static_cast<uint8_t>(v.hi >> 8);
  out[1] = static_cast<uint8_t>(v.hi);
  for (size_t i = kBytes; i-- > 2;) {
    out[i] = static_cast<uint8_t>(v.lo);
    v.lo >>= 8;
  }
}

}  // namespace

void encode(const uint8_t in[kBytes], char out[kTextLen]) noexcept {
  // Two 40-bit blocks of 8 characters each.
  for (int block = 0; block < 2; ++block) {
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) v = v << 8 | in[block * 5 + i];
    for (int i = 7; i >= 0; --i) {
      out[block * 8 + i] = kAlphabet[v & 31];
      v >>= 5;
    }
  }
}

TextParse decode(const char *text, size_t len, uint8_t out[kBytes]) noexcept {
  if (len != kTextLen) {
    size_t i = 0;
    while (i < len && kDecode.v[static_cast<unsigned char>(text[i])] >= 0) ++i;
    return {TextParse::kBadLength, i};
  }
  U80 v{0, 0};
  for (size_t i = 0; i < kTextLen; ++i) {
    const int8_t d = kDecode.v[static_cast<unsigned char>(text[i])];
    if (d < 0) return {TextParse::kBadCharacter, i};
    v.hi = (v.hi << 5 | v.lo >> 59) & 0xffff;
    v.lo = v.lo << 5 | static_cast<unsigned>(d);
  }
  store(v, out);
  return {TextParse::kOk, 0};
}

bool decode_hex(const char *text, size_t len, uint8_t out[kBytes]) noexcept {
  if (len != kHexTextLen || !is_hex_text(text, len)) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  uint8_t b[kBytes];
  for (size_t i = 0; i < kBytes; ++i) {
    const int hi = digit(text[2 + 2 * i]), lo = digit(text[3 + 2 * i]);
    if (hi < 0 || lo < 0) return false;
    b[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  for (size_t i = 0; i < kBytes; ++i) out[i] = b[i];
  return true;
}

Fields fields(const uint8_t id[kBytes]) noexcept {
  const U80 v = load(id);
  // Time and tick are the top 40 bits: hi's 16 and lo's top 24.
  const uint64_t top40 = v.hi << 24 | v.lo >> 40;
  return {top40 >> 1, (top40 & 1) != 0, static_cast<uint8_t>(v.lo >> 32),
          static_cast<uint16_t>(v.lo >> 16), static_cast<uint16_t>(v.lo)};
}

void compose(const Fields &f, uint8_t out[kBytes]) noexcept {
  const uint64_t top40 = (f.units & kMaxUnits) << 1 | (f.tick ? 1 : 0);
  store({top40 >> 24, (top40 & 0xffffff) << 40 | uint64_t{f.meta} << 32 |
                          uint64_t{f.partition} << 16 | f.sequence},
        out);
}

bool at_unix_ms(int64_t unix_ms, uint8_t out[kBytes]) noexcept {
  if (unix_ms < kEpochUnixMs) return false;
  const uint64_t units = static_cast<uint64_t>(unix_ms - kEpochUnixMs) / kUnitMs;
  if (units > kMaxUnits) return false;
  compose({units, false, 0, 0, 0}, out);
  return true;
}

}  // namespace snowflake::sno
