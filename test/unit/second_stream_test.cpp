// Unit tests of the one-second streams (second_stream.hpp) behind rsxid() and ksuid(), on a fake
// clock: the counter and its carry, the lead bound, the reservation's rule (a second is issued
// once the reservation covers its first millisecond), the floors a stream starts from (a
// restart, a replayed reservation, a new lease holder), the end of each layout, the bytes.
#include "core/clock.hpp"
#include "core/issue_loop.hpp"
#include "core/ksuid_codec.hpp"
#include "core/second_stream.hpp"
#include "core/shared_state.hpp"
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
using seconds::Format;
using seconds::kCounterBits;
using seconds::kKsuid;
using seconds::kMaxCounter;
using seconds::kXid;

namespace {

// 2026-01-01 00:00:00 UTC, a second's first millisecond.
constexpr uint64_t kT = 1767225600000;
constexpr uint64_t kTs = kT / 1000;

uint64_t word(uint64_t second, uint64_t counter) { return second << kCounterBits | counter; }

// A KSUID as ksuid() makes it: the stream's bytes, then the random tail.
void ksuid_with(uint64_t w, uint32_t shard, const uint8_t *random, uint8_t *out) {
  seconds::compose_ksuid(w, shard, out);
  std::memcpy(out + seconds::kKsuidRandomOffset, random, seconds::kKsuidRandomBytes);
}
// A Unix second as the format's own.
uint64_t own(uint64_t unix_s, const Format &f) { return unix_s - f.origin_unix_s; }

// One shard's stream and its kind's floor, as second_stream.hpp's next takes them.
struct OneStream {
  std::atomic<uint64_t> last;
  std::atomic<uint64_t> floor_unix_ms;
  void init() {
    last.store(0);
    floor_unix_ms.store(0);
  }
};

struct Fixture {
  OneStream s;
  const Format &f;
  uint64_t lead_ms = 1024;
  uint64_t limit = UINT64_MAX;
  explicit Fixture(const Format &format) : f(format) { s.init(); }
  NextResult next(uint64_t now_unix_ms) {
    return seconds::next(s.last, s.floor_unix_ms, now_unix_ms, lead_ms, limit, f);
  }
};

// The reservation writer as reservation.cpp runs it (reservation_due, reservation_target), with
// a write that takes latency_ms to publish, and a generator's after_issue (streams.hpp).
struct FakeWriter {
  uint64_t reserved;
  uint64_t window = 1000;
  uint64_t latency_ms = 50;
  uint64_t requested = 0;
  bool writing = false;
  uint64_t publish_at = 0, target = 0;
  explicit FakeWriter(uint64_t initial) : reserved(initial) {}

  void after_issue(uint64_t high, uint64_t now) {
    if (reservation_due(high, reserved, window, high > now ? high - now : 0))
      requested = std::max(requested, high);
  }
  // The writer's loop at the clock now.
  void run(uint64_t now) {
    if (writing && now >= publish_at) {
      reserved = std::max(reserved, target);
      writing = false;
    }
    if (!writing && requested != 0 &&
        reservation_due(requested, reserved, window, requested > now ? requested - now : 0)) {
      target = reservation_target(std::max(now, requested), now, window, latency_ms, reserved);
      publish_at = now + latency_ms;
      writing = true;
    }
  }
};

// Issues `per_ms` values each millisecond from start for ms milliseconds, at the pace of the
// clock, with the writer above; counts the calls that would have waited.
struct PaceRun {
  uint64_t issued = 0, waits = 0, reserves = 0, last = 0;
  bool increasing = true;
};
PaceRun run_at_pace(Fixture &x, FakeWriter &w, uint64_t start, uint64_t ms, uint64_t per_ms) {
  PaceRun r;
  for (uint64_t now = start; now < start + ms; ++now) {
    w.run(now);
    for (uint64_t i = 0; i < per_ms; ++i) {
      x.limit = w.reserved;
      const NextResult n = x.next(now);
      if (n.step == Step::kWait) {
        ++r.waits;
        break;
      }
      if (n.step == Step::kReserve) {
        ++r.reserves;
        w.after_issue(n.value, now);  // a waiting generator asks for it
        break;
      }
      EXPECT_EQ(n.step, Step::kIssued);
      if (n.value <= r.last) r.increasing = false;
      r.last = n.value;
      ++r.issued;
      w.after_issue(seconds::issued_high_unix_ms(n.value, now, x.f), now);
    }
  }
  return r;
}

}  // namespace

TEST(SecondStream, ASecondStartsAtCounterZeroAndItsMillisecondsShareIt) {
  for (const Format *f : {&kXid, &kKsuid}) {
    Fixture x(*f);
    const uint64_t s = own(kTs, *f);
    EXPECT_EQ(x.next(kT).value, word(s, 0));
    EXPECT_EQ(x.next(kT + 999).value, word(s, 1));  // the same second
    EXPECT_EQ(x.next(kT + 1000).value, word(s + 1, 0));
    EXPECT_EQ(seconds::word_high_unix_ms(word(s + 1, 0), *f), kT + 1000);
    EXPECT_EQ(seconds::word_high_unix_ms(0, *f), 0u);
  }
}

TEST(SecondStream, AFullSecondCarriesIntoTheNextAheadOfTheClock) {
  Fixture x(kXid);
  x.s.last.store(word(kTs, kMaxCounter - 1));
  EXPECT_EQ(x.next(kT + 10).value, word(kTs, kMaxCounter));
  const NextResult r = x.next(kT + 10);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.value, word(kTs + 1, 0));  // 990 ms ahead of the clock, within max_lead
  // At the default max_lead (1,024 ms: one whole second), the second after that waits for the
  // clock's next second, and consumes nothing.
  x.s.last.store(word(kTs + 1, kMaxCounter));
  const NextResult wait = x.next(kT + 10);
  ASSERT_EQ(wait.step, Step::kWait);
  EXPECT_EQ(wait.value, 990u);  // until kT + 1000
  EXPECT_EQ(x.s.last.load(), word(kTs + 1, kMaxCounter));
  EXPECT_EQ(x.next(kT + 1000).value, word(kTs + 2, 0));
  // A max_lead below a second lets no second carry: the next one waits for the clock.
  Fixture y(kKsuid);
  y.lead_ms = 999;
  y.s.last.store(word(own(kTs, kKsuid), kMaxCounter));
  const NextResult none = y.next(kT + 400);
  ASSERT_EQ(none.step, Step::kWait);
  EXPECT_EQ(none.value, 600u);
  EXPECT_EQ(y.next(kT + 1000).value, word(own(kTs, kKsuid) + 1, 0));
}

TEST(SecondStream, ASecondIsIssuedOnceTheReservationCoversItsFirstMillisecond) {
  for (const Format *f : {&kXid, &kKsuid}) {
    Fixture x(*f);
    const uint64_t s = own(kTs, *f);
    x.limit = kT;  // the second's first millisecond is not covered
    const NextResult r = x.next(kT + 500);
    ASSERT_EQ(r.step, Step::kReserve);
    EXPECT_EQ(r.value, kT);  // the reservation must exceed it
    EXPECT_EQ(x.s.last.load(), 0u);
    x.limit = kT + 1;  // covers it, not the rest of the second
    EXPECT_EQ(x.next(kT + 500).value, word(s, 0));
    // A carry into the next second needs that second's first millisecond covered.
    x.s.last.store(word(s, kMaxCounter));
    const NextResult carry = x.next(kT + 500);
    ASSERT_EQ(carry.step, Step::kReserve);
    EXPECT_EQ(carry.value, kT + 1000);
    x.limit = kT + 1001;
    EXPECT_EQ(x.next(kT + 500).value, word(s + 1, 0));
  }
}

TEST(SecondStream, AtFullPaceAndDefaultSettingsNoCallWaitsAtASecondsBoundary) {
  // The writer publishes 50 ms after it is asked; the stream issues 2,000 values a millisecond
  // (2,000,000 a second) for 5 s, across five boundaries. sno's rule for a one-second unit
  // (the reservation must cover the second's last millisecond) would wait at each of them.
  for (const Format *f : {&kXid, &kKsuid}) {
    Fixture x(*f);
    FakeWriter w(kT + 300);
    const PaceRun r = run_at_pace(x, w, kT + 1, 5000, 2000);
    EXPECT_EQ(r.reserves, 0u);
    EXPECT_EQ(r.waits, 0u);
    EXPECT_EQ(r.issued, 5000u * 2000u);
    EXPECT_TRUE(r.increasing);
    EXPECT_EQ(r.last >> kCounterBits, own(kTs + 5, *f));
  }
}

TEST(SecondStream, TheReservationAtExitKeepsTheNextRunInALaterSecond) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), 0u);
  state->streams.ksuid.shards.words[0].last.store(word(own(kTs, kKsuid), 17));
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kT);  // the second's first ms
  state->streams.rsxid.shards.words[0].last.store(word(kTs + 1, 3));
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kT + 1000);
  // Just above it: the next run's floor, whose first second is past every value of this run.
  const uint64_t at_exit =
      reservation_at_exit(high_water_unix_ms(*state, kDefaultEpochMs), 0, kT + 5000);
  EXPECT_EQ(at_exit, kT + 1001);
  EXPECT_EQ(seconds::first_second_from(at_exit, kXid), kTs + 2);
}

TEST(SecondStream, ARestartWithTheClockMinutesBehindStartsInALaterSecondAtFullPace) {
  for (const Format *f : {&kXid, &kKsuid}) {
    using Kind = seconds::StreamsT<SpinLock>;
    Kind &(*pick)(SharedStateT<SpinLock> &) =
        f == &kXid ? +[](SharedStateT<SpinLock> &st) -> Kind & { return st.streams.rsxid; }
                   : +[](SharedStateT<SpinLock> &st) -> Kind                &{ return st.streams.ksuid; };
    // The first run issues in second kTs, its last value 900 ms into it.
    auto first = std::make_unique<SharedStateT<SpinLock>>();
    first->init();
    Fixture before(*f);
    before.limit = kT + 2000;
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(before.next(kT + 900).step, Step::kIssued);
    pick(*first).shards.words[0].last.store(before.s.last.load());
    const uint64_t old_last = before.s.last.load();
    const uint64_t at_exit =
        reservation_at_exit(high_water_unix_ms(*first, kDefaultEpochMs), 0, kT + 2000);
    ASSERT_EQ(at_exit, kT + 1);
    // The second run: its wall clock 10 minutes behind; the reservation loaded is the floor of
    // the clock (reservation.cpp's load_reservation) and of the one-second streams.
    auto second = std::make_unique<SharedStateT<SpinLock>>();
    second->init();
    int64_t mono = int64_t{7} * 1000000000;
    int64_t wall = static_cast<int64_t>(kT + 950 - 600000) * 1000000;
    const int64_t hold = static_cast<int64_t>(reservation_reach_ms(1000, 1024)) * 1000000;
    EXPECT_GT(
        clock_start_at(second->clock, mono, wall, static_cast<int64_t>(at_exit) * 1000000, hold),
        hold);  // far behind: the clock runs from the reservation
    second->streams.raise_floors(at_exit);
    LocalClock local;
    auto now = [&] {
      return static_cast<uint64_t>(
          clock_now(
              second->clock, local, [&] { return mono; }, [&] { return wall; })
              .unix_ns /
          1000000);
    };
    const uint64_t start = now();
    EXPECT_GE(start, at_exit);
    EXPECT_LT(start, kT + 1000);  // still in the last run's second
    Fixture after(*f);
    after.s.floor_unix_ms.store(pick(*second).floor_unix_ms.load());
    FakeWriter w(at_exit);
    // 3 s at 1,000,000 values a second, the clock moving at real-time rate.
    PaceRun r;
    for (uint64_t ms = 0; ms < 3000; ++ms) {
      const uint64_t t = now();
      w.run(t);
      for (int i = 0; i < 1000; ++i) {
        after.limit = w.reserved;
        const NextResult n = after.next(t);
        if (n.step == Step::kReserve) {
          if (r.issued != 0) ++r.reserves;  // a start's first value waits for the writer
          w.after_issue(n.value, t);
          break;
        }
        ASSERT_EQ(n.step, Step::kIssued) << ms;
        if (r.issued == 0) {
          EXPECT_GT(n.value, old_last);
          EXPECT_EQ(n.value, word(own(kTs, *f) + 1, 0));  // the second after the floor's
        }
        ++r.issued;
        w.after_issue(seconds::issued_high_unix_ms(n.value, t, *f), t);
      }
      mono += 1000000;
      wall += 1000000;
    }
    // Only the first value waited for the writer (51 ms: a start's reservation covers no time
    // ahead), as every kind's does; none after it, and none waited for the clock.
    EXPECT_EQ(r.reserves, 0u);
    EXPECT_EQ(r.issued, 2949u * 1000u);
  }
}

TEST(SecondStream, AReplayedReservationIsAFloorForAPromotedStandby) {
  auto standby = std::make_unique<SharedStateT<SpinLock>>();
  standby->init();
  // The primary issued in kTs while its reservation was kT + 1250: replayed, it is the floor.
  standby->streams.raise_floors(kT + 1250);
  standby->streams.raise_floors(kT + 700);  // an older record replayed again: no change
  Fixture x(kXid);
  x.s.floor_unix_ms.store(standby->streams.rsxid.floor_unix_ms.load());
  EXPECT_EQ(x.s.floor_unix_ms.load(), kT + 1250);
  const NextResult r = x.next(kT + 1250);  // the clock carried to the reservation
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.value, word(kTs + 2, 0));  // the first second that begins at or after it
  // A floor on a second's first millisecond: that second can hold no earlier value.
  Fixture y(kKsuid);
  y.s.floor_unix_ms.store(kT + 2000);
  EXPECT_EQ(y.next(kT + 2000).value, word(own(kTs, kKsuid) + 2, 0));
}

TEST(SecondStream, ANewLeaseHolderDoesNotIssueInTheSecondTheOldOneIssuedIn) {
  for (const Format *f : {&kXid, &kKsuid}) {
    const bool xid = f == &kXid;
    // The old holder issued in second kTs, 10 ms into it.
    auto old_holder = std::make_unique<SharedStateT<SpinLock>>();
    old_holder->init();
    seconds::StreamsT<SpinLock> &old_stream =
        xid ? old_holder->streams.rsxid : old_holder->streams.ksuid;
    Fixture issuing(*f);
    issuing.limit = kT + 1500;  // its mark
    ASSERT_EQ(issuing.next(kT + 10).step, Step::kIssued);
    old_stream.shards.words[0].last.store(issuing.s.last.load());
    // Its clean stop: the final mark just above the range's last value (LeaseMachine::stop).
    const uint64_t final_mark = range_high_unix_ms(*old_holder, 5, 1, kDefaultEpochMs) + 1;
    ASSERT_EQ(final_mark, kT + 1);
    // The new holder's clock is 5 minutes behind: taken() carries it a millisecond past the
    // mark and raises the streams' floors.
    auto next_holder = std::make_unique<SharedStateT<SpinLock>>();
    next_holder->init();
    const int64_t mono = int64_t{3} * 1000000000;
    const int64_t wall = static_cast<int64_t>(kT - 300000) * 1000000;
    next_holder->clock.offset_ns.store(wall - mono);
    (void)clock_carry(next_holder->clock, static_cast<int64_t>(final_mark + 1) * 1000000, mono,
                      wall, static_cast<int64_t>(reservation_reach_ms(1000, 1024)) * 1000000);
    const uint64_t now = static_cast<uint64_t>(clock_peek(next_holder->clock, mono) / 1000000);
    EXPECT_GE(now, final_mark + 1);
    EXPECT_LT(now, kT + 1000);  // in the old holder's second
    next_holder->streams.raise_floors_for_range(final_mark);
    Fixture x(*f);
    x.s.floor_unix_ms.store(
        (xid ? next_holder->streams.rsxid : next_holder->streams.ksuid).floor_unix_ms.load());
    x.limit = final_mark;  // the mark read, until a new one is stored
    const NextResult wait = x.next(now);
    ASSERT_EQ(wait.step, Step::kReserve);
    EXPECT_EQ(wait.value, kT + 1000);
    x.limit = final_mark + 2000;
    const NextResult r = x.next(now);
    ASSERT_EQ(r.step, Step::kIssued);
    EXPECT_EQ(r.value >> kCounterBits, own(kTs, *f) + 1);
    // A holder that crashed left its mark ahead, above every second it issued in.
    Fixture y(*f);
    y.s.floor_unix_ms.store(kT + 1500);
    EXPECT_EQ(y.next(kT + 1501).value >> kCounterBits, own(kTs, *f) + 2);
  }
}

TEST(SecondStream, ANewRangeOfTheSameServerStartsPastItsLastSecond) {
  // The stream ran a second ahead of the clock on shard 9; the range taken next, shard 4, has an
  // old mark. Its values must sort above the earlier ones, so they start in the next second.
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  state->streams.rsxid.shards.words[0].last.store(word(kTs + 1, 40));
  state->streams.raise_floors_for_range(kT - 60000);
  EXPECT_EQ(state->streams.rsxid.floor_unix_ms.load(), kT + 2000);
  EXPECT_EQ(state->streams.ksuid.floor_unix_ms.load(), kT - 60000);  // it issued nothing
  Fixture x(kXid);
  x.s.last.store(word(kTs + 1, 40));
  x.s.floor_unix_ms.store(kT + 2000);
  const NextResult wait = x.next(kT + 200);  // two seconds past the clock's: beyond the lead
  ASSERT_EQ(wait.step, Step::kWait);
  EXPECT_EQ(wait.value, 800u);
  EXPECT_EQ(x.next(kT + 1000).value, word(kTs + 2, 0));
  uint8_t a[seconds::kXidBytes], b[seconds::kXidBytes];
  seconds::compose_xid(word(kTs + 1, 40), 9, 77, a);
  seconds::compose_xid(word(kTs + 2, 0), 4, 77, b);
  EXPECT_LT(std::memcmp(a, b, sizeof a), 0);
}

TEST(SecondStream, ACleanStopsFinalMarkCountsBothStreams) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  state->shards[9].last.store((kT + 1 - kDefaultEpochMs) << kSeqBits | 3);
  EXPECT_EQ(range_high_unix_ms(*state, 9, 1, kDefaultEpochMs), kT + 1);
  state->streams.rsxid.shards.words[0].last.store(word(kTs + 3, 0));
  EXPECT_EQ(range_high_unix_ms(*state, 9, 1, kDefaultEpochMs), kT + 3000);
  state->streams.ksuid.shards.words[0].last.store(word(own(kTs + 4, kKsuid), 9));
  EXPECT_EQ(range_high_unix_ms(*state, 9, 1, kDefaultEpochMs), kT + 4000);
}

TEST(SecondStream, EachLayoutEndsAtItsLastSecond) {
  // xid: 2106-02-07 06:28:15 UTC is its last second; KSUID: 2150-06-19 23:21:35 UTC.
  EXPECT_EQ(kXid.origin_unix_s + seconds::kMaxSeconds, 4294967295u);
  EXPECT_EQ(kKsuid.origin_unix_s + seconds::kMaxSeconds, 5694967295u);
  for (const Format *f : {&kXid, &kKsuid}) {
    const uint64_t last_s = f->origin_unix_s + seconds::kMaxSeconds;
    Fixture x(*f);
    const NextResult r = x.next(last_s * 1000 + 500);
    ASSERT_EQ(r.step, Step::kIssued);
    EXPECT_EQ(r.value, word(seconds::kMaxSeconds, 0));
    x.s.last.store(word(seconds::kMaxSeconds, kMaxCounter));
    EXPECT_EQ(x.next(last_s * 1000 + 500).step, Step::kExhausted);  // no second to carry into
    Fixture y(*f);
    EXPECT_EQ(y.next((last_s + 1) * 1000).step, Step::kExhausted);
    EXPECT_EQ(y.s.last.load(), 0u);
    // The top value's bytes: all ones in the time and counter fields.
    uint8_t b[seconds::kKsuidBytes] = {};
    const uint8_t random[seconds::kKsuidRandomBytes] = {};
    ksuid_with(word(seconds::kMaxSeconds, kMaxCounter), 0, random, b);
    EXPECT_EQ(ksuid::unix_s(b), 5694967295);
  }
}

TEST(SecondStream, XidBytesHoldTimeShardPidAndCounter) {
  uint8_t b[seconds::kXidBytes];
  seconds::compose_xid(word(kTs, 0x123456), 8191, 0x1234abcd, b);
  EXPECT_EQ(xid::unix_s(b), kTs);
  EXPECT_EQ(b[4], 0);
  EXPECT_EQ(b[5], 0x1f);
  EXPECT_EQ(b[6], 0xff);
  EXPECT_EQ(xid::pid(b), 0xabcd);  // the low 16 bits
  EXPECT_EQ(xid::counter(b), 0x123456u);
  // Text round trip through rs/xid's codec: every such value is an xid.
  char text[xid::kTextLen];
  xid::encode(b, text);
  uint8_t back[xid::kBytes];
  ASSERT_EQ(xid::decode(text, sizeof text, back).status, xid::TextParse::kOk);
  EXPECT_EQ(0, std::memcmp(b, back, sizeof b));
  // Successive words sort in issue order, across a carry.
  uint8_t c[seconds::kXidBytes], d[seconds::kXidBytes];
  seconds::compose_xid(word(kTs, kMaxCounter), 5, 1, c);
  seconds::compose_xid(word(kTs + 1, 0), 5, 1, d);
  EXPECT_LT(std::memcmp(c, d, sizeof c), 0);
}

TEST(SecondStream, KsuidBytesHoldTimeShardCounterAndRandomTail) {
  uint8_t random[seconds::kKsuidRandomBytes];
  for (size_t i = 0; i < sizeof random; ++i) random[i] = static_cast<uint8_t>(0xa0 + i);
  uint8_t b[seconds::kKsuidBytes];
  ksuid_with(word(own(kTs, kKsuid), 0x00ff01), 300, random, b);
  EXPECT_EQ(ksuid::unix_s(b), static_cast<int64_t>(kTs));
  // Text round trip through the KSUID codec: every such value is a KSUID.
  char text[ksuid::kTextLen];
  ksuid::encode(b, text);
  uint8_t back[ksuid::kBytes];
  ASSERT_EQ(ksuid::decode(text, sizeof text, back).status, ksuid::TextParse::kOk);
  EXPECT_EQ(0, std::memcmp(b, back, sizeof b));
  EXPECT_EQ(b[4], 0x01);
  EXPECT_EQ(b[5], 0x2c);
  EXPECT_EQ(b[6], 0x00);
  EXPECT_EQ(b[7], 0xff);
  EXPECT_EQ(b[8], 0x01);
  EXPECT_EQ(0, std::memcmp(b + 9, random, sizeof random));
  // The counter sorts before the random tail: successive words in issue order whatever it is.
  uint8_t high[seconds::kKsuidRandomBytes], low[seconds::kKsuidRandomBytes];
  std::memset(high, 0xff, sizeof high);
  std::memset(low, 0, sizeof low);
  uint8_t c[seconds::kKsuidBytes], d[seconds::kKsuidBytes];
  ksuid_with(word(7, 5), 2, high, c);
  ksuid_with(word(7, 6), 2, low, d);
  EXPECT_LT(std::memcmp(c, d, sizeof c), 0);
}

namespace {

// The issue loop's server side, faked: a reservation that a wait extends.
struct LoopEnv {
  uint64_t now = kT + 400;
  uint64_t reserved = kT;
  std::vector<std::string> log;
  LeaseSlot *lease() const { return nullptr; }
  bool read_clock(ClockReading *out) {
    out->unix_ms = now;
    out->mono_ns = 1;
    return true;
  }
  uint64_t reserved_unix_ms() const { return reserved; }
  void await_lease() {}
  void await_cover(uint64_t) {}
  void await_reservation(uint64_t unix_ms) {
    log.push_back("reserve " + std::to_string(unix_ms));
    reserved = unix_ms + 1250;
  }
  void wait_for_clock(uint64_t ms) {
    log.push_back("wait " + std::to_string(ms));
    now += ms;
  }
  void wait_in_line(uint64_t ms) {
    log.push_back("in line " + std::to_string(ms));
    now += ms;
  }
  void after_issue(uint64_t high, uint64_t at) {
    log.push_back("issued " + std::to_string(high) + " " + std::to_string(at));
  }
};

struct LoopKind {
  OneStream s;
  const Format &f;
  explicit LoopKind(const Format &format) : f(format) { s.init(); }
  uint64_t origin_unix_ms() const { return f.origin_unix_ms(); }
  [[noreturn]] void raise_before_origin(uint64_t) { throw std::runtime_error("before origin"); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { throw std::runtime_error("exhausted"); }
  IssueStep step(const IssueInput &in) {
    const NextResult r =
        seconds::next(s.last, s.floor_unix_ms, in.now_unix_ms, 1024, in.limit_unix_ms, f);
    return IssueStep{
        r.step, r.value,
        r.step == Step::kIssued ? seconds::issued_high_unix_ms(r.value, in.now_unix_ms, f) : 0};
  }
};

}  // namespace

TEST(SecondStream, TheIssueLoopWaitsForTheReservationOfTheSecondsFirstMillisecond) {
  LoopEnv env;
  LoopKind kind(kKsuid);
  const IssueStep r = issue_loop(env, kind);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.value, word(own(kTs, kKsuid), 0));
  const std::vector<std::string> expected{
      "reserve " + std::to_string(kT),
      "issued " + std::to_string(kT + 400) + " " + std::to_string(kT + 400)};
  EXPECT_EQ(env.log, expected);
  // A clock before 2014-05-13 16:53:20 UTC is before any KSUID: refused, nothing issued.
  env.now = kKsuid.origin_unix_ms() - 1;
  EXPECT_THROW(issue_loop(env, kind), std::runtime_error);
  // At the lead bound, the loop waits for the clock.
  kind.s.last.store(word(own(kTs + 1, kKsuid), kMaxCounter));
  env.now = kT + 400;
  env.reserved = kT + 5000;
  env.log.clear();
  EXPECT_EQ(issue_loop(env, kind).value, word(own(kTs + 2, kKsuid), 0));
  EXPECT_EQ(env.log.front(), "wait 600");
}

TEST(SecondStream, ThreadsSharingAStreamNeverShareASecondAndCounter) {
  OneStream s;
  s.init();
  constexpr int kThreads = 4, kEach = 50000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t prev = 0;
      for (int i = 0; i < kEach; ++i) {
        const NextResult r = seconds::next(s.last, s.floor_unix_ms, kT, 1024, UINT64_MAX, kXid);
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
  EXPECT_EQ(all.back(), word(kTs, kThreads * kEach - 1));
}
