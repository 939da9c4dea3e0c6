// Unit tests of other systems' layouts and codecs (layout.hpp's foreign namespace,
// foreign_codec.hpp; KSUIDs in ksuid_test.cpp), each against an example ID published with its time,
// and at its edges; and of observing an ID from elsewhere (clock.hpp's clock_observe).
#include "core/clock.hpp"
#include "core/foreign_codec.hpp"
#include "core/layout.hpp"
#include "core/shared_state.hpp"

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
  EXPECT_EQ(find("PGEDGE_1_1", 10), &kPgedge11);
  EXPECT_EQ(find("pgedge_1", 8), nullptr);
  EXPECT_EQ(kLayoutCount, 6);
  EXPECT_EQ(&layout("twitter"), &kTwitter);
  EXPECT_EQ(&layout("discord"), &kDiscord);
  EXPECT_EQ(&layout("sonyflake"), &kSonyflake);
  EXPECT_EQ(&layout("pgedge"), &kPgedge);
}

// https://en.wikipedia.org/wiki/Snowflake_ID: 1541815603606036480 was created on
// 2022-06-28 16:07:40.105 UTC, machine 378, sequence 0. Twitter's IdWorker
// (twitter-archive/snowflake) puts the datacenter at bit 17 and the worker at bit 12, 5 bits
// each: machine 378 is datacenter 11, worker 26.
TEST(ForeignLayout, TwitterPublishedExample) {
  const Fields f = decode(layout("twitter"), 1541815603606036480u);
  EXPECT_EQ(f.unix_ms, utc_ms(2022, 6, 28, 16, 7, 40, 105));
  EXPECT_EQ(f.node, 378u);
  EXPECT_EQ(f.seq, 0u);
  const NodeParts n = split_node(f.node);
  EXPECT_EQ(n.high, 11u);  // datacenter
  EXPECT_EQ(n.low, 26u);   // worker
  // each part where IdWorker shifts it
  const NodeParts d = split_node(decode(kTwitter, uint64_t{31} << 17).node);
  EXPECT_EQ(d.high, 31u);
  EXPECT_EQ(d.low, 0u);
  const NodeParts w = split_node(decode(kTwitter, uint64_t{31} << 12).node);
  EXPECT_EQ(w.high, 0u);
  EXPECT_EQ(w.low, 31u);
}

// Discord's developer documentation (Reference, Snowflakes): 175928847299117063 is
// 2016-04-30 11:18:25.796 UTC, internal worker 1, internal process 0, increment 7.
TEST(ForeignLayout, DiscordPublishedExample) {
  const Fields f = decode(layout("discord"), 175928847299117063u);
  EXPECT_EQ(f.unix_ms, utc_ms(2016, 4, 30, 11, 18, 25, 796));
  EXPECT_EQ(f.node, (1u << 5) | 0u);  // worker above process
  EXPECT_EQ(f.seq, 7u);
  const NodeParts n = split_node(f.node);
  EXPECT_EQ(n.high, 1u);  // worker, bits 17-21
  EXPECT_EQ(n.low, 0u);   // process, bits 12-16
  EXPECT_EQ(split_node(decode(kDiscord, uint64_t{5} << 12).node).low, 5u);
}

// pgEdge snowflake (github.com/pgEdge/snowflake, snowflake.c): time in bits 22-62 since
// 2023-01-01 in both layouts; up to 1.1 the node in bits 0-9 and the count in 10-21 (1.0's
// bit fields, 1.1's SNOWFLAKE_NODE_SHIFT 0, SNOWFLAKE_COUNT_SHIFT 10); from 1.2 on (commit
// d30fbc3, "Change the order of bitfields inside a snowflake") the count in 0-11 and the
// node in 12-21. Its documentation's examples were made before 1.2: docs/snowflake_functions.md
// gives 136169504773242881 as 2024-01-11 13:08:59.845-05, node 1, count 0 (snowflake.format),
// and docs/converting.md 135824181823537153 and 135824609030176769 as 2024-01-10
// 14:16:48.438-05 and 14:18:30.292-05, node 1, count 0.
TEST(ForeignLayout, PgedgeBefore12PublishedExamples) {
  struct Example {
    uint64_t id;
    int64_t unix_ms;
  };
  for (const Example &e : {Example{136169504773242881u, utc_ms(2024, 1, 11, 18, 8, 59, 845)},
                           Example{135824181823537153u, utc_ms(2024, 1, 10, 19, 16, 48, 438)},
                           Example{135824609030176769u, utc_ms(2024, 1, 10, 19, 18, 30, 292)}}) {
    SCOPED_TRACE(e.id);
    const Fields f = decode(kPgedge11, e.id);
    EXPECT_EQ(f.unix_ms, e.unix_ms);
    EXPECT_EQ(f.node, 1u);
    EXPECT_EQ(f.seq, 0u);
    // read with 1.2's layout, the same bits give the same time, node 0 and count 1
    const Fields g = decode(kPgedge, e.id);
    EXPECT_EQ(g.unix_ms, e.unix_ms);
    EXPECT_EQ(g.node, 0u);
    EXPECT_EQ(g.seq, 1u);
  }
  // the widest node and count of each layout
  EXPECT_EQ(decode(kPgedge11, 1023).node, 1023u);
  EXPECT_EQ(decode(kPgedge11, uint64_t{4095} << 10).seq, 4095u);
  EXPECT_EQ(decode(kPgedge11, uint64_t{4095} << 10).node, 0u);
}

// From 1.2 on no ID is published with its time and fields; this one is composed as 1.2's
// snowflake.c macros pack it: node 1, count 0 at the time of the example above.
TEST(ForeignLayout, PgedgeFrom12ItsSource) {
  const uint64_t ms = static_cast<uint64_t>(utc_ms(2024, 1, 11, 18, 8, 59, 845) - 1672531200000);
  const Fields g = decode(kPgedge, ms << 22 | uint64_t{1} << 12);
  EXPECT_EQ(g.unix_ms, utc_ms(2024, 1, 11, 18, 8, 59, 845));
  EXPECT_EQ(g.node, 1u);
  EXPECT_EQ(g.seq, 0u);
  EXPECT_EQ(decode(kPgedge, uint64_t{1023} << 12).node, 1023u);
  EXPECT_EQ(decode(kPgedge, 4095).seq, 4095u);
  // a bound is the same in both layouts: only the fields below the time differ
  uint64_t a = 0, b = 0;
  ASSERT_TRUE(at(kPgedge, utc_ms(2024, 1, 11, 18, 8, 59, 845), a));
  ASSERT_TRUE(at(kPgedge11, utc_ms(2024, 1, 11, 18, 8, 59, 845), b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, ms << 22);
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
  const uint64_t units =
      static_cast<uint64_t>(utc_ms(2024, 2, 29, 12, 34, 56, 780) - l.epoch_unix_ms) / 10;
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

// The same manual's layout: after the 4 bytes of time, 5 random bytes and a 3-byte
// big-endian counter: 810c19729d and 0xe860ea = 15229162 in the example.
TEST(ForeignCodec, ObjectIdParts) {
  uint8_t id[kObjectIdBytes];
  ASSERT_EQ(objectid_from_hex("507f191e810c19729de860ea", 24, id), Parse::kOk);
  const uint8_t random[kObjectIdRandomBytes] = {0x81, 0x0c, 0x19, 0x72, 0x9d};
  EXPECT_EQ(std::memcmp(id + kObjectIdRandomOffset, random, kObjectIdRandomBytes), 0);
  EXPECT_EQ(objectid_counter(id), 15229162u);
  ASSERT_EQ(objectid_from_hex("00000000ffffffffff000001", 24, id), Parse::kOk);
  EXPECT_EQ(objectid_counter(id), 1u);  // the last byte is the lowest
  ASSERT_EQ(objectid_from_hex("000000000000000000ffffff", 24, id), Parse::kOk);
  EXPECT_EQ(objectid_counter(id), 16777215u);
  EXPECT_EQ(id[kObjectIdRandomOffset + kObjectIdRandomBytes - 1], 0);  // random ends before it
}

namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kNow = 1763000000000;        // ms
constexpr int64_t kMonoAtNow = 3600000 * kMs;  // the monotonic clock at kNow: an hour of uptime
constexpr int64_t kMarginLead = 750000;        // a floor line at its raising reading, past its time

// The clock reads kNow at kMonoAtNow and follows the monotonic clock. Times are given as the
// clock's (without the floor); observe() passes what snowflake_observe does: a tick (the
// floor line included), the clock without the floor, and the monotonic reading.
struct Observe : ::testing::Test {
  ClockState state;
  void SetUp() override {
    state.init();
    state.offset_ns.store(kNow * kMs - kMonoAtNow);
  }
  static int64_t mono_at(int64_t clock_ns) { return clock_ns - kNow * kMs + kMonoAtNow; }
  Observed observe_ns(int64_t clock_ns, int64_t observed_ms, int64_t max_ahead_ms = 5000) {
    const int64_t mono = mono_at(clock_ns);
    return clock_observe(state, clock_peek(state, mono), clock_unfloored(state, mono), mono,
                         observed_ms, max_ahead_ms);
  }
  Observed observe(int64_t clock_ms, int64_t observed_ms, int64_t max_ahead_ms = 5000) {
    return observe_ns(clock_ms * kMs, observed_ms, max_ahead_ms);
  }
  // The floor line for a monotonic reading 1 ms older than the clock's at clock_ms.
  int64_t line_before(int64_t clock_ms) const {
    return clock_floor_at(state, mono_at(clock_ms * kMs) - kMs);
  }
};

}  // namespace

TEST_F(Observe, AnIdTwoMillisecondsBackChangesNothing) {
  EXPECT_EQ(observe_ns(kNow * kMs + 999999, kNow - 2), Observed::kBehind);
  EXPECT_EQ(observe(kNow, kNow - 100000), Observed::kBehind);
  EXPECT_EQ(state.floor_base_ns.load(), kClockUnset);
}

// A tick in the millisecond after the observed one is not a full millisecond past it:
// another backend's tick can trail it, so the line is raised to cover such ticks too.
TEST_F(Observe, TheMillisecondRightAfterTheIdStillRaisesTheLine) {
  const int64_t seen_at = kNow * kMs + 999999;  // the last nanosecond of kNow
  EXPECT_EQ(observe_ns(seen_at, kNow - 1), Observed::kRaised);
  EXPECT_EQ(clock_floor_at(state, mono_at(seen_at) - kMs), kNow * kMs);
  EXPECT_EQ(observe_ns(seen_at, kNow - 1), Observed::kBehind);  // done already
  EXPECT_EQ(clock_floor_at(state, mono_at(seen_at) - kMs), kNow * kMs);
}

TEST_F(Observe, AnIdAheadRaisesTheLinePastItsMillisecond) {
  EXPECT_EQ(observe(kNow, kNow + 3000), Observed::kRaised);
  EXPECT_EQ(line_before(kNow), (kNow + 3001) * kMs);
  EXPECT_EQ(clock_peek(state, mono_at(kNow * kMs)), (kNow + 3001) * kMs + kMarginLead);
  // The line never comes down.
  EXPECT_EQ(observe(kNow, kNow + 100), Observed::kBehind);
  EXPECT_EQ(line_before(kNow), (kNow + 3001) * kMs);
  // It rises at 3/4 of real-time rate, so the lead fades: a second later the ticks are
  // 250 ms closer to the clock.
  EXPECT_EQ(clock_peek(state, mono_at((kNow + 1000) * kMs)), (kNow + 3751) * kMs + kMarginLead);
  // A later ID, within the bound of the clock then, raises it again.
  EXPECT_EQ(observe(kNow + 1000, kNow + 5000), Observed::kRaised);
  EXPECT_EQ(line_before(kNow + 1000), (kNow + 5001) * kMs);
}

TEST_F(Observe, AnIdOfTheClocksOwnMillisecondRaisesTheLine) {
  EXPECT_EQ(observe_ns(kNow * kMs + 400000, kNow), Observed::kRaised);
  EXPECT_EQ(clock_floor_at(state, mono_at(kNow * kMs + 400000) - kMs), (kNow + 1) * kMs);
}

// Another backend's monotonic reading can trail the observer's (an extrapolated counter):
// its ticks, from a reading up to 1 ms older than the observer's, are after the observed
// millisecond too.
TEST_F(Observe, TicksFromAReadingUpToAMillisecondOlderAreAfterTheObservedMillisecond) {
  const int64_t seen_at = kNow * kMs + 400000;
  const int64_t observed_ms = kNow + 2000;
  ASSERT_EQ(observe_ns(seen_at, observed_ms), Observed::kRaised);
  const int64_t mono = mono_at(seen_at);
  for (int64_t lag = 0; lag <= kMs; lag += 997) {
    for (const int64_t m : {mono - lag, mono - kMs + lag % 8}) {  // and around 1 ms, to the ns
      LocalClock other;
      const ClockTick t = clock_now(
          state, other, [m] { return m; }, [m] { return m - kMonoAtNow + kNow * kMs; });
      ASSERT_EQ(t.event, ClockEvent::kNone);
      ASSERT_GT(t.unix_ns / kMs, observed_ms) << lag;
    }
  }
  EXPECT_EQ(clock_floor_at(state, mono - kMs), (observed_ms + 1) * kMs);  // exactly 1 ms early
}

TEST_F(Observe, TheBoundIsFromTheClockNotTheFloor) {
  EXPECT_EQ(observe(kNow, kNow + 5000), Observed::kRaised);
  EXPECT_EQ(observe(kNow, kNow + 5001), Observed::kTooFarAhead);
  // An ID 1 s past the ticks (the floor) is 6 s past the clock: refused. Measured from the
  // ticks, a chain of observations could ratchet the IDs' time ahead a bound at a time.
  const int64_t tick_ms = clock_peek(state, mono_at(kNow * kMs)) / kMs;
  EXPECT_EQ(tick_ms, kNow + 5001);
  EXPECT_EQ(observe(kNow, tick_ms + 1000), Observed::kTooFarAhead);
  EXPECT_EQ(line_before(kNow), (kNow + 5001) * kMs);
  // A chain over 5 s, each ID at the bound of the clock then: the ticks stay 5001 ms (and
  // the margin) ahead of the clock, and an ID a bound past the ticks is refused each time.
  for (int64_t clock_ms = kNow + 100; clock_ms <= kNow + 5000; clock_ms += 100) {
    EXPECT_EQ(observe(clock_ms, clock_ms + 5000), Observed::kRaised) << clock_ms;
    const int64_t tick = clock_peek(state, mono_at(clock_ms * kMs));
    EXPECT_EQ(tick, (clock_ms + 5001) * kMs + kMarginLead) << clock_ms;
    EXPECT_EQ(observe(clock_ms, tick / kMs + 5000), Observed::kTooFarAhead) << clock_ms;
  }
  // An ID far past what nanoseconds hold (a ULID of the year 10000) is refused, not wrapped.
  EXPECT_EQ(observe(kNow, int64_t{1} << 47), Observed::kTooFarAhead);
}

TEST_F(Observe, AZeroBoundAllowsTheClocksOwnMillisecond) {
  EXPECT_EQ(observe(kNow, kNow + 1, 0), Observed::kTooFarAhead);
  EXPECT_EQ(state.floor_base_ns.load(), kClockUnset);
  EXPECT_EQ(observe(kNow, kNow, 0), Observed::kRaised);
  EXPECT_EQ(line_before(kNow), (kNow + 1) * kMs);
}

TEST_F(Observe, AnUnstartedClockRefuses) {
  state.init();
  const int64_t mono = mono_at(kNow * kMs);
  EXPECT_EQ(
      clock_observe(state, clock_peek(state, mono), clock_unfloored(state, mono), mono, kNow, 5000),
      Observed::kTooFarAhead);
  EXPECT_EQ(state.floor_base_ns.load(), kClockUnset);
}

TEST(Reservation, HighWaterCountsObservedIds) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  state->shards[1].last.store(uint64_t{5000} << kSeqBits);
  Reservation::raise(state->reservation.observed_unix_ms, kDefaultEpochMs + 7000);
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kDefaultEpochMs + 7000);
}
