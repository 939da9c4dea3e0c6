// Unit tests of the sno and xid codecs (sno_codec.hpp, xid_codec.hpp), against vectors made
// by the reference implementations: github.com/muyo/sno at a543713 and Debian's rs/xid
// (golang-github-rs-xid-dev), whose own tests list the xid fields below.
#include "core/shared_state.hpp"
#include "core/sno_codec.hpp"
#include "core/sno_stream.hpp"
#include "core/xid_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
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
  // Of the wrong length too, the first byte outside the alphabet (the length when none): a
  // text of 16 characters and 17 bytes is told from one of 17 characters by it.
  EXPECT_EQ(sno::decode("22222222222222222", 17, b).position, 17u);
  EXPECT_EQ(sno::decode("6ncg4s4cr5wwi22\xc3\xa9", 17, b).position, 15u);
  EXPECT_EQ(sno::decode("6ncG4s4cr5wwi22\xc3\xa9", 17, b).position, 3u);
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

TEST(SnoCodec, ReadsByteaHexTextOfTenBytes) {
  uint8_t b[sno::kBytes];
  const uint8_t want[sno::kBytes] = {0x4e, 0x6f, 0x21, 0x60, 0xa0, 0xff, 0x9a, 0x0a, 0x10, 0x33};
  ASSERT_TRUE(sno::decode_hex("\\x4e6f2160a0ff9a0a1033", 22, b));
  EXPECT_EQ(0, std::memcmp(b, want, sno::kBytes));
  ASSERT_TRUE(sno::decode_hex("\\x4E6F2160A0FF9A0A1033", 22, b));
  EXPECT_EQ(0, std::memcmp(b, want, sno::kBytes));
  EXPECT_FALSE(sno::decode_hex("\\x4e6f2160a0ff9a0a10", 20, b));
  EXPECT_FALSE(sno::decode_hex("\\x4e6f2160a0ff9a0a103300", 24, b));
  EXPECT_FALSE(sno::decode_hex("\\x4e6f2160a0ff9a0a10zz", 22, b));
  EXPECT_FALSE(sno::decode_hex("\\X4e6f2160a0ff9a0a1033", 22, b));
  EXPECT_FALSE(sno::decode_hex("x\\4e6f2160a0ff9a0a1033", 22, b));
  EXPECT_FALSE(sno::is_hex_text("brpk4q72xwf2m63l", 16));
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
  EXPECT_EQ(xid::decode("9m4e2mr0ui3e8a215n4g0", 21, b).position, 21u);
  EXPECT_EQ(xid::decode("9m4e2mr0ui3e8a215n4\xc3\xa9", 21, b).position, 19u);
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

// ---- The server's sno stream (sno_stream.hpp) on a fake clock: Unix milliseconds in, 4 ms
// units and a 16-bit sequence in the word.

namespace {

constexpr uint64_t kSnoEpoch = static_cast<uint64_t>(sno::kEpochUnixMs);
// 2026-01-01 00:00:00 UTC, on a unit's first millisecond.
constexpr uint64_t kT = 1767225600000;
constexpr uint64_t kTUnit = (kT - kSnoEpoch) / 4;

struct SnoStream {
  std::atomic<uint64_t> last{0};
  uint64_t lead_ms = 1000;
  uint64_t reserved_unix_ms = UINT64_MAX;
  NextResult next(uint64_t now_unix_ms) {
    return sno::next(last, now_unix_ms, lead_ms, reserved_unix_ms);
  }
};

uint64_t word(uint64_t unit, uint64_t seq) { return unit << sno::kSeqBits | seq; }

}  // namespace

TEST(SnoStream, AUnitStartsAtSequenceZeroAndItsFourMillisecondsShareIt) {
  SnoStream s;
  EXPECT_EQ(s.next(kT).value, word(kTUnit, 0));
  EXPECT_EQ(s.next(kT + 3).value, word(kTUnit, 1));  // the same unit
  EXPECT_EQ(s.next(kT + 4).value, word(kTUnit + 1, 0));
  uint8_t b[sno::kBytes];
  sno::compose_issued(word(kTUnit + 1, 0), 200, 65000, b);
  const sno::Fields f = sno::fields(b);
  EXPECT_EQ(f.units, kTUnit + 1);
  EXPECT_EQ(sno::units_to_unix_ms(f.units), static_cast<int64_t>(kT + 4));
  EXPECT_FALSE(f.tick);
  EXPECT_EQ(f.meta, 200);
  EXPECT_EQ(f.partition, 65000);
  EXPECT_EQ(f.sequence, 0);
  // The same bytes as the codec's compose, at the edges of every field.
  for (const uint64_t unit : {uint64_t{0}, kTUnit, sno::kMaxUnits})
    for (const uint32_t seq : {0u, 1u, 65535u})
      for (const int meta : {0, 7, 255})
        for (const int part : {0, 1, 65000, 65535}) {
          uint8_t mine[sno::kBytes], codec[sno::kBytes];
          sno::compose_issued(word(unit, seq), static_cast<uint8_t>(meta),
                              static_cast<uint16_t>(part), mine);
          sno::compose(sno::Fields{unit, false, static_cast<uint8_t>(meta),
                                   static_cast<uint16_t>(part), static_cast<uint16_t>(seq)},
                       codec);
          ASSERT_EQ(0, std::memcmp(mine, codec, sno::kBytes)) << unit << " " << seq;
        }
}

TEST(SnoStream, AFullUnitCarriesIntoTheNextWithoutWaiting) {
  SnoStream s;
  uint64_t prev = 0;
  for (uint32_t i = 0; i < 65536 * 2 + 10; ++i) {
    const NextResult r = s.next(kT);
    ASSERT_EQ(r.step, Step::kIssued);
    ASSERT_GT(r.value, prev);
    prev = r.value;
  }
  EXPECT_EQ(prev, word(kTUnit + 2, 9));
  // The bytes of successive words (any metabyte) sort in issue order: the word is the order key.
  uint8_t a[sno::kBytes], b[sno::kBytes];
  sno::compose_issued(word(kTUnit, 65535), 255, 1, a);
  sno::compose_issued(word(kTUnit + 1, 0), 0, 1, b);
  EXPECT_LT(std::memcmp(a, b, sno::kBytes), 0);
  // A sno never has the tick-tock bit, even after a carry.
  sno::compose_issued(prev, 0, 1, b);
  EXPECT_FALSE(sno::fields(b).tick);
}

TEST(SnoStream, AClockStepBackNeitherStallsNorRepeatsNorGoesBack) {
  // The server's IDs' clock (clock.hpp) on a fake machine whose wall clock steps 10 minutes back.
  ClockState state;
  state.init();
  LocalClock local;
  int64_t mono = int64_t{5000} * 1000000, wall = static_cast<int64_t>(kT) * 1000000;
  auto now_unix_ms = [&] {
    const ClockTick t = clock_now(
        state, local, [&] { return mono; }, [&] { return wall; });
    return static_cast<uint64_t>(t.unix_ns / 1000000);
  };
  SnoStream s;
  uint64_t prev = 0;
  auto issue = [&] {
    const NextResult r = s.next(now_unix_ms());
    EXPECT_EQ(r.step, Step::kIssued);
    EXPECT_GT(r.value, prev);
    prev = r.value;
    return r.value;
  };
  const uint64_t before = issue();
  mono += 4000000;
  wall += 4000000 - int64_t{600000} * 1000000;
  for (int i = 0; i < 2500; ++i) {  // 10 s, a sno each 4 ms
    issue();
    mono += 4000000;
    wall += 4000000;
  }
  // The snos' time went on at real-time rate: 2,501 units, none waited for, none repeated.
  EXPECT_EQ((issue() >> sno::kSeqBits) - (before >> sno::kSeqBits), 2501u);
  EXPECT_EQ(state.steps_back.load(), 1u);
  // Handed a time behind the stream (within the lead), the stream still goes on from its last.
  const NextResult r = s.next(now_unix_ms() - 400);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.value, prev + 1);
}

TEST(SnoStream, TheLeadBoundMakesTheCallerWaitAndConsumesNothing) {
  SnoStream s;
  s.lead_ms = 8;  // two units ahead of the clock
  for (uint32_t i = 0; i < 3 * 65536; ++i) ASSERT_EQ(s.next(kT).step, Step::kIssued);
  const NextResult r = s.next(kT);
  EXPECT_EQ(r.step, Step::kWait);
  EXPECT_EQ(r.value, 4u);  // one unit
  EXPECT_EQ(s.last.load(), word(kTUnit + 2, 65535));
  const NextResult after = s.next(kT + 4);  // the clock moved a unit on
  ASSERT_EQ(after.step, Step::kIssued);
  EXPECT_EQ(after.value, word(kTUnit + 3, 0));
}

TEST(SnoStream, AUnitIsIssuedOnlyWhenTheReservationCoversAllOfIt) {
  SnoStream s;
  s.reserved_unix_ms = kT + 7;  // covers kTUnit, and kTUnit + 1 only up to its 3rd ms
  EXPECT_EQ(s.next(kT).step, Step::kIssued);
  const NextResult r = s.next(kT + 4);
  ASSERT_EQ(r.step, Step::kReserve);
  EXPECT_EQ(r.value, kT + 7);  // the reservation must exceed the unit's last millisecond
  EXPECT_EQ(s.last.load(), word(kTUnit, 0));  // nothing consumed
  s.reserved_unix_ms = kT + 8;
  EXPECT_EQ(s.next(kT + 4).value, word(kTUnit + 1, 0));
}

TEST(SnoStream, TheReservationAtExitKeepsSnosOfTheNextRunAbove) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), 0u);
  state->streams.sno.words[0].last.store(word(kTUnit, 17));
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kT + 3);  // the unit's last ms
  // At exit the reservation comes down to just above it; the next run's clock starts there,
  // so its first unit is past every unit of this run, with the clock minutes behind.
  const uint64_t at_exit =
      reservation_at_exit(high_water_unix_ms(*state, kDefaultEpochMs), 0, kT + 5000);
  EXPECT_EQ(at_exit, kT + 4);
  SnoStream next_run;
  next_run.reserved_unix_ms = at_exit + 1250;
  const NextResult r = next_run.next(at_exit);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_GT(r.value, word(kTUnit, 17));
}

TEST(SnoStream, ACleanStopsFinalMarkIsAboveTheSnosOfTheLeasedShard) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  EXPECT_EQ(range_high_unix_ms(*state, 9, 2, kDefaultEpochMs), 0u);
  // snowflake() IDs of shard 10 at kT + 1, then snos (partition 9) up to kTUnit + 5.
  state->shards[10].last.store((kT + 1 - kDefaultEpochMs) << kSeqBits | 3);
  EXPECT_EQ(range_high_unix_ms(*state, 9, 2, kDefaultEpochMs), kT + 1);
  state->streams.sno.words[0].last.store(word(kTUnit + 5, 0));
  // The unit's last millisecond: the next holder, starting past it, is in a later unit.
  EXPECT_EQ(range_high_unix_ms(*state, 9, 2, kDefaultEpochMs), kT + 23);
  // Shards outside the range do not count; the server's sno stream always does.
  state->shards[12].last.store((kT + 100 - kDefaultEpochMs) << kSeqBits);
  EXPECT_EQ(range_high_unix_ms(*state, 9, 2, kDefaultEpochMs), kT + 23);
  EXPECT_EQ(range_high_unix_ms(*state, 12, 1, kDefaultEpochMs), kT + 100);
}

TEST(SnoStream, ThreadsSharingTheStreamNeverShareAUnitAndSequence) {
  std::atomic<uint64_t> last{0};
  constexpr int kThreads = 4, kEach = 50000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t prev = 0;
      for (int i = 0; i < kEach; ++i) {
        const NextResult r = sno::next(last, kT, 1000, UINT64_MAX);
        if (r.step != Step::kIssued || r.value <= prev) return;  // counted below
        prev = r.value;
        got[t].push_back(r.value);
      }
    });
  for (std::thread &th : threads) th.join();
  std::vector<uint64_t> all;
  for (const auto &g : got) {
    EXPECT_EQ(g.size(), static_cast<size_t>(kEach));
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}
