// Unit tests of the KSUID codec (ksuid_codec.hpp): Segment's published examples, the texts
// segmentio/ksuid 1.0.4 (Debian's golang-github-segmentio-ksuid-dev) writes for chosen bytes,
// the cases of its ksuid_test.go, and the order and time bound the type relies on.
#include "core/ksuid_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace snowflake;

namespace {

std::string text_of(const uint8_t id[ksuid::kBytes]) {
  char t[ksuid::kTextLen];
  ksuid::encode(id, t);
  return std::string(t, ksuid::kTextLen);
}

std::vector<uint8_t> from_hex(const char *h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; h[i] != '\0'; i += 2) out.push_back(std::stoi(std::string(h + i, 2), 0, 16));
  return out;
}

struct Vector {
  const char *text;
  const char *hex;
  int64_t unix_s;
};

// Segment's README (ksuid -f inspect) for the first two, TestAppend's, and what
// ksuid.FromBytes(...).String() and .Time() give for chosen bytes.
const Vector kVectors[] = {
    {"0ujtsYcgvSTl8PAuAdqWYSMnLOv", "0669f7efb5a1cd34b5f99d1154fb6853345c9735", 1507608047},
    {"0ujzPyRiIAffKhBux4PvQdDqMHY", "066a029c73fc1aa3b2446246d6e89fcd909e8fe8", 1507610780},
    {"0pN1Own7255s7jwpwy495bAZeEa", "05ce9937f913f6b0f6d2a9ebee9583ffa9a2ccd0", 1497425719},
    {"000000000000000000000000000", "0000000000000000000000000000000000000000", 1400000000},
    {"000000000000000000000000001", "0000000000000000000000000000000000000001", 1400000000},
    {"000007n42DGM5Tflk9n8mt7Fhc8", "0000000100000000000000000000000000000000", 1400000001},
    {"0A42ooYeVw3Mne3Lq3NTHYStAVr", "0123456789abcdef0123456789abcdef01234567", 1419088743},
    {"aWgEPLxxrZOFaOlDVFHTB3ZiQOO", "ffffffff00000000000000000000000000000000", 5694967295},
    {"aWgEPTl1tmebfsQzFP4bxwgy80U", "fffffffffffffffffffffffffffffffffffffffe", 5694967295},
    {"aWgEPTl1tmebfsQzFP4bxwgy80V", "ffffffffffffffffffffffffffffffffffffffff", 5694967295},
};

}  // namespace

TEST(KsuidCodec, MatchesTheReference) {
  for (const Vector &v : kVectors) {
    SCOPED_TRACE(v.text);
    const std::vector<uint8_t> bytes = from_hex(v.hex);
    ASSERT_EQ(bytes.size(), ksuid::kBytes);
    uint8_t id[ksuid::kBytes];
    ASSERT_EQ(ksuid::decode(v.text, ksuid::kTextLen, id).status, ksuid::TextParse::kOk);
    EXPECT_EQ(0, std::memcmp(id, bytes.data(), ksuid::kBytes));
    EXPECT_EQ(text_of(bytes.data()), v.text);
    EXPECT_EQ(ksuid::unix_s(id), v.unix_s);
  }
  // The README's payloads.
  uint8_t id[ksuid::kBytes];
  ASSERT_EQ(ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSMnLOv", 27, id).status, ksuid::TextParse::kOk);
  EXPECT_EQ(ksuid::stamp(id), 107608047u);
  EXPECT_EQ(0,
            std::memcmp(id + ksuid::kPayloadOffset,
                        from_hex("b5a1cd34b5f99d1154fb6853345c9735").data(), ksuid::kPayloadBytes));
}

TEST(KsuidCodec, RefusesWrongLengthsCharactersAndOverflow) {
  uint8_t id[ksuid::kBytes];
  // ksuid_test.go's TestIssue25: above the largest, and a character outside base62
  EXPECT_EQ(ksuid::decode("aaaaaaaaaaaaaaaaaaaaaaaaaaa", 27, id).status,
            ksuid::TextParse::kOverflow);
  const ksuid::TextParse bang = ksuid::decode("aWgEPTl1tmebfsQzFP4bxwgy80!", 27, id);
  EXPECT_EQ(bang.status, ksuid::TextParse::kBadCharacter);
  EXPECT_EQ(bang.position, 26u);
  // TestParse's "123"; one short, one long; a character of two bytes
  EXPECT_EQ(ksuid::decode("123", 3, id).status, ksuid::TextParse::kBadLength);
  EXPECT_EQ(ksuid::decode("123", 3, id).position, 3u);
  EXPECT_EQ(ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSMnLO", 26, id).status,
            ksuid::TextParse::kBadLength);
  EXPECT_EQ(ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSMnLOv0", 28, id).status,
            ksuid::TextParse::kBadLength);
  const ksuid::TextParse e = ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSMnL\xc3\xa9", 27, id);
  EXPECT_EQ(e.status, ksuid::TextParse::kBadCharacter);
  EXPECT_EQ(e.position, 25u);
  EXPECT_EQ(ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSM\xc3\xa9", 25, id).position, 23u);
  // 2^160 - 1 is the largest; one more, and the largest first characters
  EXPECT_EQ(ksuid::decode("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, id).status,
            ksuid::TextParse::kOverflow);
  EXPECT_EQ(ksuid::decode("aWgEPTl1tmebfsQzFP4bxwgy810", 27, id).status,
            ksuid::TextParse::kOverflow);
  EXPECT_EQ(ksuid::decode("b00000000000000000000000000", 27, id).status,
            ksuid::TextParse::kOverflow);
  EXPECT_EQ(ksuid::decode("zzzzzzzzzzzzzzzzzzzzzzzzzzz", 27, id).status,
            ksuid::TextParse::kOverflow);
  EXPECT_EQ(ksuid::decode("aWgEPTl1tmebfsQzFP4bxwgy80V", 27, id).status, ksuid::TextParse::kOk);
  for (char c : {'-', '_', ' ', '!', '\0', '\x7f'}) {
    char t[28] = "0ujtsYcgvSTl8PAuAdqWYSMnLOv";
    t[4] = c;
    const ksuid::TextParse p = ksuid::decode(t, 27, id);
    EXPECT_EQ(p.status, ksuid::TextParse::kBadCharacter) << int{c};
    EXPECT_EQ(p.position, 4u);
  }
}

// Any 20 bytes: the text is 27 characters of base62 that read back as the same bytes, and text
// order (byte-wise) is byte order.
TEST(KsuidCodec, RoundTripsAndKeepsByteOrder) {
  std::mt19937_64 rng(46);
  std::vector<std::pair<std::string, std::string>> pairs;  // (bytes, text)
  for (int n = 0; n < 20000; ++n) {
    uint8_t id[ksuid::kBytes];
    for (uint8_t &b : id) b = static_cast<uint8_t>(rng());
    // Runs of 0x00 and 0xff, where carries and borrows cross the words.
    const size_t at = rng() % ksuid::kBytes;
    const size_t len = std::min<size_t>(1 + rng() % 8, ksuid::kBytes - at);
    if (n % 4 == 1) std::memset(id + at, 0, len);
    if (n % 4 == 2) std::memset(id + at, 0xff, len);
    const std::string t = text_of(id);
    uint8_t back[ksuid::kBytes];
    ASSERT_EQ(ksuid::decode(t.data(), t.size(), back).status, ksuid::TextParse::kOk) << t;
    ASSERT_EQ(0, std::memcmp(back, id, ksuid::kBytes)) << t;
    pairs.emplace_back(std::string(reinterpret_cast<char *>(id), ksuid::kBytes), t);
  }
  std::vector<std::pair<std::string, std::string>> by_text = pairs;
  std::sort(pairs.begin(), pairs.end());
  std::sort(by_text.begin(), by_text.end(),
            [](const auto &a, const auto &b) { return a.second < b.second; });
  EXPECT_TRUE(pairs == by_text);
}

TEST(KsuidCodec, AtIsTheLowestOfItsSecond) {
  uint8_t id[ksuid::kBytes];
  ASSERT_TRUE(ksuid::at_unix_s(1400000000, id));
  EXPECT_EQ(text_of(id), "000000000000000000000000000");
  ASSERT_TRUE(ksuid::at_unix_s(1400000001, id));
  EXPECT_EQ(text_of(id), "000007n42DGM5Tflk9n8mt7Fhc8");
  ASSERT_TRUE(ksuid::at_unix_s(5694967295, id));
  EXPECT_EQ(text_of(id), "aWgEPLxxrZOFaOlDVFHTB3ZiQOO");
  EXPECT_EQ(ksuid::unix_s(id), 5694967295);
  ASSERT_TRUE(ksuid::at_unix_s(1507608047, id));
  uint8_t example[ksuid::kBytes];
  ASSERT_EQ(ksuid::decode("0ujtsYcgvSTl8PAuAdqWYSMnLOv", 27, example).status,
            ksuid::TextParse::kOk);
  EXPECT_LT(std::memcmp(id, example, ksuid::kBytes), 0);
  ASSERT_TRUE(ksuid::at_unix_s(1507608048, id));
  EXPECT_GT(std::memcmp(id, example, ksuid::kBytes), 0);
  EXPECT_FALSE(ksuid::at_unix_s(1399999999, id));
  EXPECT_FALSE(ksuid::at_unix_s(5694967296, id));
  EXPECT_FALSE(ksuid::at_unix_s(INT64_MIN, id));
  EXPECT_FALSE(ksuid::at_unix_s(INT64_MAX, id));
}
