// Unit tests of what the rsxid type adds to the xid codec (xid_codec.hpp; its reference
// vectors are in sno_test.cpp): texts rs/xid 1.4.0 (Debian's golang-github-rs-xid-dev)
// writes for chosen bytes, the round trip and order of any 12 bytes, and the time bound.
#include "core/xid_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace snowflake;

namespace {

std::string text_of(const uint8_t id[xid::kBytes]) {
  char t[xid::kTextLen];
  xid::encode(id, t);
  return std::string(t, xid::kTextLen);
}

}  // namespace

// xid.FromBytes(...).String() of 0123456789abcdef01234567 and 000000000000000000000001.
TEST(XidCodec, MoreReferenceTexts) {
  const uint8_t a[xid::kBytes] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                                  0xcd, 0xef, 0x01, 0x23, 0x45, 0x67};
  EXPECT_EQ(text_of(a), "04hkaps9lf6uu0938ljg");
  const uint8_t one[xid::kBytes] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(text_of(one), "0000000000000000000g");
}

TEST(XidCodec, RoundTripsAndKeepsByteOrder) {
  std::mt19937_64 rng(46);
  std::vector<std::pair<std::string, std::string>> pairs;  // (bytes, text)
  for (int n = 0; n < 20000; ++n) {
    uint8_t id[xid::kBytes];
    for (uint8_t &b : id) b = static_cast<uint8_t>(rng());
    if (n % 3 == 1) std::memset(id + 4, 0, rng() % 8);
    const std::string t = text_of(id);
    uint8_t back[xid::kBytes];
    ASSERT_EQ(xid::decode(t.data(), t.size(), back).status, xid::TextParse::kOk) << t;
    ASSERT_EQ(0, std::memcmp(back, id, xid::kBytes)) << t;
    pairs.emplace_back(std::string(reinterpret_cast<char *>(id), xid::kBytes), t);
  }
  std::vector<std::pair<std::string, std::string>> by_text = pairs;
  std::sort(pairs.begin(), pairs.end());
  std::sort(by_text.begin(), by_text.end(),
            [](const auto &a, const auto &b) { return a.second < b.second; });
  EXPECT_TRUE(pairs == by_text);
}

TEST(XidCodec, AtIsTheLowestOfItsSecond) {
  uint8_t id[xid::kBytes];
  ASSERT_TRUE(xid::at_unix_s(0, id));
  EXPECT_EQ(text_of(id), "00000000000000000000");
  ASSERT_TRUE(xid::at_unix_s(1, id));
  EXPECT_EQ(text_of(id), "00000080000000000000");
  ASSERT_TRUE(xid::at_unix_s(4294967295, id));
  EXPECT_EQ(text_of(id), "vvvvvvo0000000000000");
  EXPECT_EQ(xid::unix_s(id), 4294967295u);
  EXPECT_EQ(xid::pid(id), 0);
  EXPECT_EQ(xid::counter(id), 0u);
  // rs/xid's test ID, 1300816219 s: the bound of its second is below it, the next above
  uint8_t ref[xid::kBytes];
  ASSERT_EQ(xid::decode("9m4e2mr0ui3e8a215n4g", 20, ref).status, xid::TextParse::kOk);
  ASSERT_TRUE(xid::at_unix_s(1300816219, id));
  EXPECT_LT(std::memcmp(id, ref, xid::kBytes), 0);
  ASSERT_TRUE(xid::at_unix_s(1300816220, id));
  EXPECT_GT(std::memcmp(id, ref, xid::kBytes), 0);
  EXPECT_FALSE(xid::at_unix_s(-1, id));
  EXPECT_FALSE(xid::at_unix_s(4294967296, id));
  EXPECT_FALSE(xid::at_unix_s(INT64_MIN, id));
}
