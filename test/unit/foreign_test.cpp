// Unit tests of other systems' layouts and codecs (layout.hpp's foreign namespace,
// foreign_codec.hpp), each against an example ID published with its time, and at its edges;
// and of observing an ID from elsewhere (clock.hpp's clock_observe).
#include "clock.hpp"
#include "foreign_codec.hpp"
#include "layout.hpp"
#include "shared_state.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

using namespace snowflake;
using namespace snowflake::foreign;

namespace {

const Layout &layout(const char *name) {
  const Layout *l = find(name, std::strlen(name));
  EXPECT_NE(l, nullptr) << name;
  return *l;
}

// Unix ms of a UTC date and time, for the expected values.
int64_t utc_ms(int y, int mo, int d, int h, int mi, int s, int ms) {
  // days from civil (Howard Hinnant's algorithm)
  y -= mo <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + doe - 719468;
  return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms;
}

}  // namespace

TEST(ForeignLayout, NamesAreFoundInAnyCaseAndOnlyWhole) {
  EXPECT_STREQ(layout("twitter").name, "twitter");
  EXPECT_STREQ(find("Discord", 7)->name, "discord");
  EXPECT_STREQ(find("SONYFLAKE", 9)->name, "sonyflake");
  EXPECT_EQ(find("twitte", 6), nullptr);
  EXPECT_EQ(find("twitterx", 8), nullptr);
  EXPECT_EQ(find("", 0), nullptr);
  EXPECT_EQ(find("twitter\0", 8), nullptr);
  EXPECT_EQ(kLayoutCount, 5);
}

// https://en.wikipedia.org/wiki/Snowflake_ID: 1541815603606036480 was created on
// 2022-06-28 16:07:40.105 UTC, machine 378, sequence 0.
TEST(ForeignLayout, TwitterPublishedExample) {
  const Fields f = decode(layout("twitter"), 1541815603606036480u);
  EXPECT_EQ(f.unix_ms, utc_ms(2022, 6, 28, 16, 7, 40, 105));
  EXPECT_EQ(f.node, 378u);
  EXPECT_EQ(f.seq, 0u);
}

// Discord's developer documentation (Reference, Snowflakes): 175928847299117063 is
// 2016-04-30 11:18:25.796 UTC, internal worker 1, internal process 0, increment 7.
TEST(ForeignLayout, DiscordPublishedExample) {
  const Fields f = decode(layout("discord"), 175928847299117063u);
  EXPECT_EQ(f.unix_ms, utc_ms(2016, 4, 30, 11, 18, 25, 796));
  EXPECT_EQ(f.node, (1u << 5) | 0u);  // worker above process
  EXPECT_EQ(f.seq, 7u);
}

// pgEdge snowflake's documentation (docs/snowflake_functions.md): 136169504773242881 is
// 2024-01-11 13:08:59.845-05. Its node and count there were made by 1.1's order (count above
// node); from 1.2 on (snowflake.c: count in bits 0-11, node in 12-21) the same bits read
// count 1, node 0. An ID of node 1, count 0 at that time under 1.2's macros:
TEST(ForeignLayout, PgedgePublishedExample) {
  const Layout &l = layout("pgedge");
  const Fields f = decode(l, 136169504773242881u);
  EXPECT_EQ(f.unix_ms, utc_ms(2024, 1, 11, 18, 8, 59, 845));
  EXPECT_EQ(f.node, 0u);
  EXPECT_EQ(f.seq, 1u);
  const uint64_t ms = static_cast<uint64_t>(utc_ms(2024, 1, 11, 18, 8, 59, 845) - 1672531200000);
  const Fields g = decode(l, ms << 22 | uint64_t{1} << 12);
  EXPECT_EQ(g.node, 1u);
  EXPECT_EQ(g.seq, 0u);
}

// Instagram's "Sharding & IDs at Instagram" (2012): 1387263000 ms into its epoch, logical
// shard 1341, sequence 5001 % 1024 = 905, packed as time << 23 | shard << 10 | seq; with the
// epoch of its published next_id(), 1314220021721.
TEST(ForeignLayout, InstagramPublishedExample) {
  const uint64_t id = uint64_t{1387263000} << 23 | uint64_t{1341} << 10 | 905;
  const Fields f = decode(layout("instagram"), id);
  EXPECT_EQ(f.unix_ms, 1314220021721 + 1387263000);
  EXPECT_EQ(f.node, 1341u);
  EXPECT_EQ(f.seq, 905u);
  // the same bits as our own layout
  EXPECT_EQ(unpack(id).ms, 1387263000u);
}

// Sonyflake publishes no example ID with its time; this one is composed the way
// sony/sonyflake's toID does (elapsed 10 ms units << 24 | sequence << 16 | machine), with
// its default start time 2014-09-01 00:00:00 UTC: 2024-02-29 12:34:56.780, sequence 17,
// machine 0xBEEF.
TEST(ForeignLayout, SonyflakeFromItsSource) {
  const Layout &l = layout("sonyflake");
  EXPECT_EQ(l.epoch_unix_ms, utc_ms(2014, 9, 1, 0, 0, 0, 0));
  const uint64_t units = static_cast<uint64_t>(utc_ms(2024, 2, 29, 12, 34, 56, 780) - l.epoch_unix_ms) / 10;
  const uint64_t id = units << 24 | uint64_t{17} << 16 | 0xBEEF;
  const Fields f = decode(l, id);
  EXPECT_EQ(f.unix_ms, utc_ms(2024, 2, 29, 12, 34, 56, 780));
  EXPECT_EQ(f.node, 0xBEEFu);
  EXPECT_EQ(f.seq, 17u);
  // a time within a 10 ms unit gives the unit's first ID
  uint64_t at_id = 0;
  ASSERT_TRUE(at(l, utc_ms(2024, 2, 29, 12, 34, 56, 789), at_id));
  EXPECT_EQ(at_id, units << 24);
}

TEST(ForeignLayout, EdgesOfEveryLayout) {
  for (const Layout &l : kLayouts) {
    SCOPED_TRACE(l.name);
    const Fields zero = decode(l, 0);
    EXPECT_EQ(zero.unix_ms, l.epoch_unix_ms);
    EXPECT_EQ(zero.node + zero.seq, 0u);
    const Fields max = decode(l, uint64_t{INT64_MAX});
    EXPECT_EQ(max.unix_ms + static_cast<int64_t>(l.unit_ms) - 1, last_unix_ms(l));
    EXPECT_EQ(max.node, (1u << l.node_bits) - 1);
    EXPECT_EQ(max.seq, (1u << l.seq_bits) - 1);
    uint64_t id = 0;
    EXPECT_FALSE(at(l, l.epoch_unix_ms - 1, id));  // before the epoch
    ASSERT_TRUE(at(l, l.epoch_unix_ms, id));
    EXPECT_EQ(id, 0u);
    ASSERT_TRUE(at(l, last_unix_ms(l), id));
    EXPECT_EQ(id | ((uint64_t{1} << l.time_shift) - 1), uint64_t{INT64_MAX});
    EXPECT_FALSE(at(l, last_unix_ms(l) + 1, id));  // past the last unit
    // a bound and a decode agree: the bound's time is the unit that holds the time
    const int64_t t = l.epoch_unix_ms + 123456789;
    ASSERT_TRUE(at(l, t, id));
    EXPECT_LE(decode(l, id).unix_ms, t);
    EXPECT_GT(decode(l, id).unix_ms + static_cast<int64_t>(l.unit_ms), t);
  }
  // Twitter's and Discord's 41 positive bits last until 2080 and 2084.
  EXPECT_EQ(last_unix_ms(layout("twitter")), 1288834974657 + (int64_t{1} << 41) - 1);
  EXPECT_EQ(last_unix_ms(layout("discord")) / 1000 / 86400 / 365 + 1970, 2084);
}

// MongoDB's manual (ObjectId.getTimestamp()): ObjectId("507f191e810c19729de860ea") returns
// ISODate("2012-10-17T20:46:22Z").
TEST(ForeignCodec, ObjectIdPublishedExample) {
  uint8_t id[kObjectIdBytes];
  ASSERT_EQ(objectid_from_hex("507f191e810c19729de860ea", 24, id), Parse::kOk);
  EXPECT_EQ(objectid_unix_s(id) * 1000, utc_ms(2012, 10, 17, 20, 46, 22, 0));
  ASSERT_EQ(objectid_from_hex("507F191E810C19729DE860EA", 24, id), Parse::kOk);
  EXPECT_EQ(id[11], 0xea);
  EXPECT_EQ(objectid_from_hex("507f191e810c19729de860e", 23, id), Parse::kBadLength);
  EXPECT_EQ(objectid_from_hex("507f191e810c19729de860eaa", 25, id), Parse::kBadLength);
  EXPECT_EQ(objectid_from_hex("507f191e810c19729de860eg", 24, id), Parse::kBadCharacter);
  EXPECT_EQ(objectid_from_hex("ffffffff0000000000000000", 24, id), Parse::kOk);
  EXPECT_EQ(objectid_unix_s(id), 4294967295);  // unsigned: 2106-02-07 06:28:15 UTC
}

// Segment's ksuid README (inspect): 0ujtsYcgvSTl8PAuAdqWYSMnLOv is raw
// 0669F7EFB5A1CD34B5F99D1154FB6853345C9735, timestamp 107608047,
// 2017-10-09 21:00:47 -0700 PDT.
TEST(ForeignCodec, KsuidPublishedExample) {
  uint8_t id[kKsuidBytes];
  ASSERT_EQ(ksuid_from_base62("0ujtsYcgvSTl8PAuAdqWYSMnLOv", 27, id), Parse::kOk);
  const uint8_t raw[kKsuidBytes] = {0x06, 0x69, 0xF7, 0xEF, 0xB5, 0xA1, 0xCD, 0x34, 0xB5, 0xF9,
                                    0x9D, 0x11, 0x54, 0xFB, 0x68, 0x53, 0x34, 0x5C, 0x97, 0x35};
  EXPECT_EQ(std::memcmp(id, raw, kKsuidBytes), 0);
  EXPECT_EQ(load_be32(id), 107608047u);
  EXPECT_EQ(ksuid_unix_s(id) * 1000, utc_ms(2017, 10, 10, 4, 0, 47, 0));
}

TEST(ForeignCodec, KsuidEdges) {
  uint8_t id[kKsuidBytes];
  ASSERT_EQ(ksuid_from_base62("000000000000000000000000000", 27, id), Parse::kOk);
  EXPECT_EQ(ksuid_unix_s(id), kKsuidEpochUnixS);
  ASSERT_EQ(ksuid_from_base62("aWgEPTl1tmebfsQzFP4bxwgy80V", 27, id), Parse::kOk);  // 2^160 - 1
  for (uint8_t b : id) EXPECT_EQ(b, 0xff);
  EXPECT_EQ(ksuid_from_base62("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, id), Parse::kOverflow);
  EXPECT_EQ(ksuid_from_base62("zzzzzzzzzzzzzzzzzzzzzzzzzzz", 27, id), Parse::kOverflow);
  EXPECT_EQ(ksuid_from_base62("0ujtsYcgvSTl8PAuAdqWYSMnLO", 26, id), Parse::kBadLength);
  EXPECT_EQ(ksuid_from_base62("0ujtsYcgvSTl8PAuAdqWYSMnLO-", 27, id), Parse::kBadCharacter);
}

namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kNow = 1763000000000;  // ms

struct Observe : ::testing::Test {
  ClockState state;
  void SetUp() override {
    state.init();
    state.offset_ns.store(0);  // the clock reads the monotonic time as it is
  }
  Observed observe(int64_t now_ms, int64_t observed_ms, int64_t max_ahead_ms = 5000) {
    const int64_t tick = std::max(now_ms * kMs, state.floor_ns.load());
    return clock_observe(state, tick, now_ms * kMs, observed_ms, max_ahead_ms);
  }
};

}  // namespace

TEST_F(Observe, AnIdInThePastChangesNothing) {
  EXPECT_EQ(observe(kNow, kNow - 1), Observed::kBehind);
  EXPECT_EQ(state.floor_ns.load(), kClockUnset);
}

TEST_F(Observe, AnIdAheadRaisesTheFloorPastItsMillisecond) {
  EXPECT_EQ(observe(kNow, kNow + 3000), Observed::kRaised);
  EXPECT_EQ(state.floor_ns.load(), (kNow + 3001) * kMs);
  // the same millisecond as the clock is ahead too: IDs of this millisecond could be below it
  EXPECT_EQ(observe(kNow + 4000, kNow + 4000), Observed::kRaised);
  EXPECT_EQ(state.floor_ns.load(), (kNow + 4001) * kMs);
  // the floor never comes down
  EXPECT_EQ(observe(kNow, kNow + 100), Observed::kBehind);
  EXPECT_EQ(state.floor_ns.load(), (kNow + 4001) * kMs);
}

TEST_F(Observe, TheBoundIsFromTheClockNotTheFloor) {
  EXPECT_EQ(observe(kNow, kNow + 5000), Observed::kRaised);
  EXPECT_EQ(observe(kNow, kNow + 5001), Observed::kTooFarAhead);
  // a chain of observations cannot ratchet the IDs' time further than the bound
  EXPECT_EQ(observe(kNow, kNow + 9000), Observed::kTooFarAhead);
  EXPECT_EQ(state.floor_ns.load(), (kNow + 5001) * kMs);
  // an ID far past what nanoseconds hold (a ULID of the year 10000) is refused, not wrapped
  EXPECT_EQ(observe(kNow, int64_t{1} << 47), Observed::kTooFarAhead);
}

TEST_F(Observe, AZeroBoundAllowsTheClocksOwnMillisecond) {
  EXPECT_EQ(observe(kNow, kNow + 1, 0), Observed::kTooFarAhead);
  EXPECT_EQ(state.floor_ns.load(), kClockUnset);
  EXPECT_EQ(observe(kNow, kNow, 0), Observed::kRaised);
  EXPECT_EQ(state.floor_ns.load(), (kNow + 1) * kMs);
}

TEST_F(Observe, AnUnstartedClockRefuses) {
  EXPECT_EQ(clock_observe(state, 0, kClockUnset, kNow, 5000), Observed::kTooFarAhead);
}

TEST(Reservation, HighWaterCountsObservedIds) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  state->shards[1].last.store(uint64_t{5000} << kSeqBits);
  Reservation::raise(state->reservation.observed_unix_ms, kDefaultEpochMs + 7000);
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kDefaultEpochMs + 7000);
}
