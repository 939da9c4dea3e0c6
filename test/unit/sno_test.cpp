// Unit tests of the sno and xid codecs (sno_codec.hpp, xid_codec.hpp), against vectors made
// by the reference implementations: github.com/muyo/sno at a543713 and Debian's rs/xid
// (golang-github-rs-xid-dev), whose own tests list the xid fields below.
#include "core/sno_codec.hpp"
#include "core/xid_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace snowflake;

namespace {

struct SnoVector {
  const char *text;
  uint8_t bytes[10];
  uint64_t units;
  bool tick;
  uint8_t meta;
  uint16_t partition;
  uint16_t sequence;
  int64_t unix_ms;
};

// sno.Generator.NewWithTime and sno.FromEncodedString; the first three at partition 65000:
// 2020-02-29 12:34:56.789, 2010-01-01 00:00:00, 2079-09-07 15:47:35.548 UTC.
const SnoVector kSnoVectors[] = {
    {"6ncg4s4cr5wwi222",
     {0x25, 0x54, 0xe1, 0x68, 0x4a, 0xc8, 0xfd, 0xe8, 0x00, 0x00},
     80168924197,
     false,
     200,
     65000,
     0,
     1582979696788},
    {"2222222225wwi223",
     {0, 0, 0, 0, 0, 0, 0xfd, 0xe8, 0, 1},
     0,
     false,
     0,
     65000,
     1,
     1262304000000},
    {"xxxxxxxwxxwwi224",
     {0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xfd, 0xe8, 0x00, 0x02},
     549755813887,
     false,
     255,
     65000,
     2,
     3461327255548},
    {"2222222222222222", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, false, 0, 0, 0, 1262304000000},
    {"brpk4q72xwf2m63l",
     {0x4e, 0x6f, 0x21, 0x60, 0xa0, 0xff, 0x9a, 0x0a, 0x10, 0x33},
     168435953744,
     false,
     255,
     39434,
     4147,
     1936047814976},
    {"xxxxxxxxxxxxxxxx",
     {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
     549755813887,
     true,
     255,
     65535,
     65535,
     3461327255548},
    {"2222222322222222", {0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, 0, true, 0, 0, 0, 1262304000000},
};

std::string sno_text(const uint8_t b[sno::kBytes]) {
  char t[sno::kTextLen];
  sno::encode(b, t);
  return std::string(t, sno::kTextLen);
}

}  // namespace

TEST(SnoCodec, MatchesTheReferenceTextBytesAndFields) {
  for (const SnoVector &v : kSnoVectors) {
    SCOPED_TRACE(v.text);
    EXPECT_EQ(sno_text(v.bytes), v.text);
    uint8_t b[sno::kBytes];
    const sno::TextParse p = sno::decode(v.text, std::strlen(v.text), b);
    ASSERT_EQ(p.status, sno::TextParse::kOk);
    EXPECT_EQ(0, std::memcmp(b, v.bytes, sno::kBytes));
    const sno::Fields f = sno::fields(v.bytes);
    EXPECT_EQ(f.units, v.units);
    EXPECT_EQ(f.tick, v.tick);
    EXPECT_EQ(f.meta, v.meta);
    EXPECT_EQ(f.partition, v.partition);
    EXPECT_EQ(f.sequence, v.sequence);
    EXPECT_EQ(sno::units_to_unix_ms(f.units), v.unix_ms);
    uint8_t c[sno::kBytes];
    sno::compose(f, c);
    EXPECT_EQ(0, std::memcmp(c, v.bytes, sno::kBytes));
  }
}

TEST(SnoCodec, TextOrderIsByteOrder) {
  // Each bit alone, and neighbours across each character's boundary.
  std::vector<std::vector<uint8_t>> ids;
  for (int bit = 0; bit < 80; ++bit) {
    std::vector<uint8_t> b(sno::kBytes, 0);
    b[bit / 8] = static_cast<uint8_t>(0x80 >> (bit % 8));
    ids.push_back(b);
    for (auto &x : b) x = static_cast<uint8_t>(x - 1);
    ids.push_back(b);
  }
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = 0; j < ids.size(); ++j) {
      const int bytes = std::memcmp(ids[i].data(), ids[j].data(), sno::kBytes);
      const int text = sno_text(ids[i].data()).compare(sno_text(ids[j].data()));
      ASSERT_EQ(bytes < 0, text < 0) << i << " " << j;
      ASSERT_EQ(bytes == 0, text == 0) << i << " " << j;
    }
}

TEST(SnoCodec, RefusesWrongLengthsAndNamesTheFirstBadCharacter) {
  uint8_t b[sno::kBytes];
  EXPECT_EQ(sno::decode("", 0, b).status, sno::TextParse::kBadLength);
  EXPECT_EQ(sno::decode("222222222222222", 15, b).status, sno::TextParse::kBadLength);
  EXPECT_EQ(sno::decode("22222222222222222", 17, b).status, sno::TextParse::kBadLength);
  // Out of the alphabet: 0, 1, y, z, upper case, a space, a NUL.
  const char bad[] = {'0', '1', 'y', 'z', 'A', 'X', ' ', '\0', '-'};
  for (size_t pos : {size_t{0}, size_t{7}, size_t{15}})
    for (char c : bad) {
      char t[sno::kTextLen + 1] = "brpk4q72xwf2m63l";
      t[pos] = c;
      t[15 - pos % 15] = c == '0' ? '1' : '0';  // a later bad one is not the one named
      const sno::TextParse p = sno::decode(t, sno::kTextLen, b);
      ASSERT_EQ(p.status, sno::TextParse::kBadCharacter) << pos << " " << c;
      EXPECT_EQ(p.position, std::min(pos, 15 - pos % 15)) << pos << " " << c;
    }
}

TEST(SnoCodec, AtIsTheLowestOfItsUnitWithinTheRange) {
  uint8_t b[sno::kBytes];
  EXPECT_FALSE(sno::at_unix_ms(sno::kEpochUnixMs - 1, b));
  ASSERT_TRUE(sno::at_unix_ms(sno::kEpochUnixMs, b));
  EXPECT_EQ(sno_text(b), "2222222222222222");
  // 2020-02-29 12:34:56.788 to .791 are one unit, whose lowest sno is below the reference's.
  for (int64_t ms = 1582979696788; ms < 1582979696792; ++ms) {
    ASSERT_TRUE(sno::at_unix_ms(ms, b));
    EXPECT_EQ(sno_text(b), "6ncg4s4c22222222");
  }
  ASSERT_TRUE(sno::at_unix_ms(1582979696792, b));
  EXPECT_EQ(sno::fields(b).units, 80168924198u);
  // The last unit, 2079-09-07 15:47:35.548 to .551.
  ASSERT_TRUE(sno::at_unix_ms(3461327255551, b));
  EXPECT_EQ(sno_text(b), "xxxxxxxw22222222");
  EXPECT_FALSE(sno::at_unix_ms(3461327255552, b));
}

namespace {

struct XidVector {
  const char *text;
  uint8_t bytes[12];
  uint32_t unix_s;
  uint8_t machine[3];
  uint16_t pid;
  uint32_t counter;
};

// rs/xid's id_test.go (IDs) and the largest; the texts from xid.ID.String().
const XidVector kXidVectors[] = {
    {"9m4e2mr0ui3e8a215n4g",
     {0x4d, 0x88, 0xe1, 0x5b, 0x60, 0xf4, 0x86, 0xe4, 0x28, 0x41, 0x2d, 0xc9},
     1300816219,
     {0x60, 0xf4, 0x86},
     0xe428,
     4271561},
    {"00000000000000000000", {0}, 0, {0, 0, 0}, 0, 0},
    {"0000005anf6drrg0000g",
     {0x00, 0x00, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x00, 0x00, 0x01},
     0,
     {0xaa, 0xbb, 0xcc},
     0xddee,
     1},
    {"vvvvvvvvvvvvvvvvvvvg",
     {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
     4294967295,
     {0xff, 0xff, 0xff},
     65535,
     16777215},
};

}  // namespace

TEST(XidCodec, MatchesTheReferenceTextBytesAndFields) {
  for (const XidVector &v : kXidVectors) {
    SCOPED_TRACE(v.text);
    char t[xid::kTextLen];
    xid::encode(v.bytes, t);
    EXPECT_EQ(std::string(t, xid::kTextLen), v.text);
    uint8_t b[xid::kBytes];
    ASSERT_EQ(xid::decode(v.text, xid::kTextLen, b).status, xid::TextParse::kOk);
    EXPECT_EQ(0, std::memcmp(b, v.bytes, xid::kBytes));
    EXPECT_EQ(xid::unix_s(b), v.unix_s);
    EXPECT_EQ(0, std::memcmp(b + xid::kMachineOffset, v.machine, xid::kMachineBytes));
    EXPECT_EQ(xid::pid(b), v.pid);
    EXPECT_EQ(xid::counter(b), v.counter);
  }
}

TEST(XidCodec, RefusesWrongLengthsCharactersAndPadding) {
  uint8_t b[xid::kBytes];
  EXPECT_EQ(xid::decode("9m4e2mr0ui3e8a215n4", 19, b).status, xid::TextParse::kBadLength);
  EXPECT_EQ(xid::decode("9m4e2mr0ui3e8a215n4g0", 21, b).status, xid::TextParse::kBadLength);
  for (char c : {'w', 'z', 'A', 'V', '-', ' ', '\0'}) {
    char t[xid::kTextLen + 1] = "9m4e2mr0ui3e8a215n4g";
    t[5] = c;
    const xid::TextParse p = xid::decode(t, xid::kTextLen, b);
    ASSERT_EQ(p.status, xid::TextParse::kBadCharacter) << c;
    EXPECT_EQ(p.position, 5u);
  }
  // The last character's 4 padding bits: only 0 and g leave them clear.
  for (char c : {'1', 'f', 'h', 'v'}) {
    char t[xid::kTextLen + 1] = "9m4e2mr0ui3e8a215n4g";
    t[19] = c;
    const xid::TextParse p = xid::decode(t, xid::kTextLen, b);
    ASSERT_EQ(p.status, xid::TextParse::kBadPadding) << c;
    EXPECT_EQ(p.position, 19u);
  }
}
