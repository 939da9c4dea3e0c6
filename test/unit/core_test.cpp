// Unit tests of the PostgreSQL-free core: layout, never-backwards clock (with a fake clock),
// and the generator state machine.
#include "core/clock.hpp"
#include "core/generator.hpp"
#include "core/layout.hpp"
#include "core/shared_state.hpp"
#include "core/tsc_clock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace snowflake;
using SharedState = SharedStateT<SpinLock>;

namespace {

constexpr int64_t kMs = 1000000;                     // ns
constexpr int64_t kSecond = 1000 * kMs;              // ns
constexpr int64_t kMinute = 60 * kSecond;            // ns
constexpr int64_t kWallStart = 1763000000000 * kMs;  // some day in 2025, ns since 1970

// A fake machine: a monotonic clock and a wall clock that tests advance and step.
struct FakeClock {
  int64_t mono = 5000 * kMs;
  int64_t wall = kWallStart;
  void advance(int64_t ns) {
    mono += ns;
    wall += ns;
  }
  ClockTick now(ClockState &state, LocalClock &local) {
    return clock_now(
        state, local, [this] { return mono; }, [this] { return wall; });
  }
};

struct ClockTest : ::testing::Test {
  ClockState state;
  LocalClock local;
  FakeClock clock;
  void SetUp() override { state.init(); }
};

struct Generator {
  std::atomic<uint64_t> last{0};
  uint64_t lead_ms = 1000;
  uint64_t reserved_ms = UINT64_MAX;
  NextResult next(uint64_t now_ms) {
    return next_state<kSeqBits>(last, now_ms, Limits{lead_ms, kMaxTimeMs, reserved_ms});
  }
};

}  // namespace

TEST(Layout, InstagramBitPositions) {
  EXPECT_EQ(pack(1, 0, 0), uint64_t{1} << 23);
  EXPECT_EQ(pack(0, 1, 0), uint64_t{1} << 10);
  EXPECT_EQ(pack(0, 0, 1), uint64_t{1});
  EXPECT_EQ(pack(123456789, 4321, 987), (uint64_t{123456789} << 23) | (4321u << 10) | 987u);
}

TEST(Layout, RoundTripAndEdges) {
  const Decoded d = unpack(pack(kMaxTimeMs, kMaxShard, kMaxSeq));
  EXPECT_EQ(d.ms, kMaxTimeMs);
  EXPECT_EQ(d.shard, kMaxShard);
  EXPECT_EQ(d.seq, kMaxSeq);
  EXPECT_EQ(pack(kMaxTimeMs, kMaxShard, kMaxSeq), uint64_t{INT64_MAX});
  const Decoded z = unpack(0);
  EXPECT_EQ(z.ms + z.shard + z.seq, 0u);
  // 2^40 - 1 ms after 2020-01-01 is 2054-11-03T19:53:47.775Z.
  EXPECT_EQ(static_cast<int64_t>(kMaxTimeMs) + kDefaultEpochMs, 2677348427775);
}

TEST_F(ClockTest, FollowsTheWallClock) {
  EXPECT_EQ(clock.now(state, local).unix_ns, kWallStart);
  clock.advance(3 * kMs);
  EXPECT_EQ(clock.now(state, local).unix_ns, kWallStart + 3 * kMs);
}

TEST_F(ClockTest, BackwardStepOf10msNeitherRepeatsNorStalls) {
  clock.now(state, local);
  clock.advance(2 * kMs);
  clock.wall -= 10 * kMs;
  const ClockTick t = clock.now(state, local);
  EXPECT_EQ(t.event, ClockEvent::kStepBack);
  EXPECT_EQ(t.step_ns, 10 * kMs);
  EXPECT_EQ(t.unix_ns, kWallStart + 2 * kMs);  // not 8 ms earlier
  for (int i = 1; i <= 20; ++i) {
    clock.advance(kMs);
    const ClockTick u = clock.now(state, local);
    EXPECT_EQ(u.event, ClockEvent::kNone) << "one warning per step, not per reading";
    EXPECT_EQ(u.unix_ns, kWallStart + (2 + i) * kMs);  // real-time rate
  }
  EXPECT_EQ(state.steps_back.load(), 1u);
}

TEST_F(ClockTest, BackwardStepOf10MinutesKeepsGeneratingAtRealTimeRate) {
  Generator gen;
  uint64_t prev = 0;
  auto issue = [&] {
    const int64_t now_ms = clock.now(state, local).unix_ns / kMs - kDefaultEpochMs;
    const NextResult r = gen.next(static_cast<uint64_t>(now_ms));
    EXPECT_EQ(r.step, Step::kIssued);
    EXPECT_GT(r.value, prev);
    prev = r.value;
    return r.value >> kSeqBits;
  };
  const uint64_t before = issue();
  clock.advance(kMs);
  clock.wall -= 10 * kMinute;
  int events = 0;
  for (int i = 0; i < 5000; ++i) {  // 5 s of simulated time, one ID per ms
    LocalClock other;               // and a fresh backend each time: still one event
    const ClockTick t = clock.now(state, i % 2 ? local : other);
    events += t.event == ClockEvent::kStepBack;
    issue();
    clock.advance(kMs);
  }
  EXPECT_EQ(events, 1);
  // The IDs' time advanced by the 5 s that passed, no more and no less.
  EXPECT_EQ(issue() - before, 5001u);
}

TEST_F(ClockTest, ForwardStepIsFollowedAndReported) {
  clock.now(state, local);
  clock.advance(2 * kMs);
  clock.wall += 60 * kMinute;
  const ClockTick t = clock.now(state, local);
  EXPECT_EQ(t.event, ClockEvent::kStepForward);
  EXPECT_EQ(t.step_ns, 60 * kMinute);
  EXPECT_EQ(t.unix_ns, kWallStart + 2 * kMs + 60 * kMinute);
  clock.advance(2 * kMs);
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kNone);
  EXPECT_EQ(state.steps_forward.load(), 1u);
}

TEST_F(ClockTest, ForwardThenBackIsTwoEventsAndTimeNeverReturns) {
  clock.now(state, local);
  clock.advance(2 * kMs);
  clock.wall += 60 * kMinute;
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kStepForward);
  clock.advance(2 * kMs);
  clock.wall -= 60 * kMinute;
  const ClockTick back = clock.now(state, local);
  EXPECT_EQ(back.event, ClockEvent::kStepBack);
  EXPECT_EQ(back.unix_ns, kWallStart + 4 * kMs + 60 * kMinute);
  // Forward again to where the IDs are, then back again: a new event.
  clock.advance(2 * kMs);
  clock.wall += 60 * kMinute;
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kNone);
  clock.advance(2 * kMs);
  clock.wall -= 60 * kMinute;
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kStepBack);
  EXPECT_EQ(state.steps_back.load(), 2u);
}

TEST_F(ClockTest, WallClockIsReadAtMostOncePerMillisecond) {
  int wall_reads = 0;
  auto mono = [this] { return clock.mono; };
  auto wall = [this, &wall_reads] {
    ++wall_reads;
    return clock.wall;
  };
  for (int i = 0; i < 1000; ++i) {
    clock_now(state, local, mono, wall);
    clock.advance(10000);  // 10 us
  }
  EXPECT_EQ(wall_reads, 10);
}

TEST_F(ClockTest, PreemptedReadingIsRetried) {
  // The process is descheduled for 1 ms between the first monotonic reading and the wall
  // reading: that pair would move the offset 0.5 ms forward, so it must not be used.
  const int64_t offset = clock.wall - clock.mono;
  bool preempted = false;
  auto mono = [this] { return clock.mono; };
  auto wall = [this, &preempted] {
    if (!preempted) clock.advance(kMs);
    preempted = true;
    return clock.wall;
  };
  const ClockTick t = clock_now(state, local, mono, wall);
  EXPECT_EQ(state.offset_ns.load(), offset);
  EXPECT_EQ(t.unix_ns, clock.wall);
  EXPECT_EQ(t.event, ClockEvent::kNone);
}

TEST_F(ClockTest, SlowReadingsNeitherMoveTheOffsetNorWarn) {
  clock.now(state, local);
  const int64_t offset = state.offset_ns.load();
  // From now on every wall reading takes 20 ms (the process is descheduled each time).
  auto mono = [this] { return clock.mono; };
  auto slow_wall = [this] {
    clock.advance(20 * kMs);
    return clock.wall;
  };
  for (int i = 0; i < 50; ++i) {
    clock.advance(2 * kMs);
    EXPECT_EQ(clock_now(state, local, mono, slow_wall).event, ClockEvent::kNone);
  }
  EXPECT_EQ(state.offset_ns.load(), offset);
}

TEST_F(ClockTest, StaleReadingDoesNotReportABackwardStep) {
  LocalClock other;
  clock.now(state, local);
  clock.advance(2 * kMs);
  // Backend B reads the wall clock just before a forward step of one hour; backend A sees the
  // step and raises the offset before B compares its reading with the state.
  const int64_t before_step = clock.wall;
  auto mono = [this] { return clock.mono; };
  auto stale_wall = [&] {
    clock.wall += 60 * kMinute;
    EXPECT_EQ(clock.now(state, other).event, ClockEvent::kStepForward);  // backend A
    return before_step;
  };
  const ClockTick b = clock_now(state, local, mono, stale_wall);
  EXPECT_EQ(b.event, ClockEvent::kNone);
  EXPECT_EQ(state.steps_back.load(), 0u);
  EXPECT_EQ(b.unix_ns, clock.wall);  // and B follows the new time
}

TEST(GeneratorTest, NewMillisecondStartsAtSequenceZero) {
  Generator gen;
  EXPECT_EQ(gen.next(100).value, uint64_t{100} << kSeqBits);
  EXPECT_EQ(gen.next(100).value, (uint64_t{100} << kSeqBits) | 1);
  EXPECT_EQ(gen.next(101).value, uint64_t{101} << kSeqBits);
}

TEST(GeneratorTest, FiveThousandInOneMillisecondRunAheadWithoutWaiting) {
  Generator gen;
  uint64_t prev = 0;
  std::set<uint64_t> seen;
  for (int i = 0; i < 5000; ++i) {
    const NextResult r = gen.next(100);
    ASSERT_EQ(r.step, Step::kIssued);
    ASSERT_GT(r.value, prev);
    prev = r.value;
    seen.insert(r.value);
  }
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(prev >> kSeqBits, 104u);  // 5000 = 4 * 1024 + 904
  EXPECT_EQ(prev & kMaxSeq, 5000u - 4 * 1024 - 1);
}

TEST(GeneratorTest, LeadBoundMakesTheCallerWait) {
  Generator gen;
  gen.lead_ms = 2;
  for (int i = 0; i < 3 * 1024; ++i) ASSERT_EQ(gen.next(100).step, Step::kIssued);
  const NextResult r = gen.next(100);
  EXPECT_EQ(r.step, Step::kWait);
  EXPECT_EQ(r.value, 1u);
  EXPECT_EQ(gen.last.load(), (uint64_t{102} << kSeqBits) | kMaxSeq);  // nothing consumed
  const NextResult after = gen.next(101);                             // the clock moved on
  EXPECT_EQ(after.step, Step::kIssued);
  EXPECT_EQ(after.value, uint64_t{103} << kSeqBits);
}

TEST(GeneratorTest, ZeroLeadWaitsForEveryNewMillisecond) {
  Generator gen;
  gen.lead_ms = 0;
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(gen.next(7).step, Step::kIssued);
  EXPECT_EQ(gen.next(7).step, Step::kWait);
}

TEST(GeneratorTest, NothingIsIssuedAtOrPastTheReservation) {
  Generator gen;
  gen.reserved_ms = 102;
  EXPECT_EQ(gen.next(100).step, Step::kIssued);
  const NextResult r = gen.next(102);
  EXPECT_EQ(r.step, Step::kReserve);
  EXPECT_EQ(r.value, 102u);
  EXPECT_EQ(gen.last.load() >> kSeqBits, 100u);  // nothing consumed
  gen.reserved_ms = 1102;                        // extended
  EXPECT_EQ(gen.next(102).value, uint64_t{102} << kSeqBits);
}

// ---- The floor line, and carrying a reservation across a restart or from WAL.

// A reservation's own reach past the last IDs (reservation_reach_ms with a 1 s window and a
// 1 s snowflake.max_lead): a reservation further ahead of the clock means it was set back.
constexpr int64_t kHold = 6 * kSecond;
// Where a floor line is at the monotonic reading it was raised with: it reached its time
// kFloorMarginNs earlier, and rose 3/4 of that since.
constexpr int64_t kMarginLead = 750000;

TEST(FloorLine, ReachesItsTimeAMillisecondEarlyAndRisesAtThreeQuartersRate) {
  ClockState s;
  s.init();
  const int64_t mono = 5000 * kMs;
  const int64_t at = kWallStart + kMinute;
  EXPECT_EQ(clock_floor_at(s, mono), kClockUnset);  // no line yet
  EXPECT_TRUE(clock_raise_floor(s, at, mono));
  EXPECT_EQ(clock_floor_at(s, mono - kMs), at);  // the margin: a lagging reading is covered
  EXPECT_EQ(clock_floor_at(s, mono), at + kMarginLead);
  EXPECT_EQ(clock_floor_at(s, mono + kSecond), at + kMarginLead + 750 * kMs);
  EXPECT_EQ(clock_floor_at(s, mono + 4 * kSecond), at + kMarginLead + 3 * kSecond);
  // Never lower at a later reading, whatever the rounding of a quarter.
  for (int64_t m = mono - 9; m < mono + 9; ++m)
    EXPECT_LE(clock_floor_at(s, m), clock_floor_at(s, m + 1)) << m;
  // Raised only where it is below: a time the line already passes changes nothing.
  EXPECT_FALSE(clock_raise_floor(s, at + 750 * kMs, mono + kSecond + kMs));
  EXPECT_EQ(clock_floor_at(s, mono - kMs), at);
  EXPECT_TRUE(clock_raise_floor(s, at + 2 * kSecond, mono + kSecond));
  EXPECT_EQ(clock_floor_at(s, mono + kSecond - kMs), at + 2 * kSecond);
}

TEST_F(ClockTest, CarryIsAFloorWithinTheHoldAndRunsFromBeyondIt) {
  clock.now(state, local);
  const int64_t offset = state.offset_ns.load();
  // At or below the clock: nothing to do.
  EXPECT_EQ(clock_carry(state, clock.wall, clock.mono, clock.wall, kHold), Carried::kBelow);
  EXPECT_EQ(clock_carry(state, clock.wall - kMinute, clock.mono, clock.wall, kHold),
            Carried::kBelow);
  EXPECT_EQ(state.floor_base_ns.load(), kClockUnset);
  // The hold ahead, exactly: a floor line, the offset untouched, no step.
  EXPECT_EQ(clock_carry(state, clock.wall + kHold, clock.mono, clock.wall, kHold), Carried::kFloor);
  EXPECT_EQ(clock_floor_at(state, clock.mono - kMs), clock.wall + kHold);
  EXPECT_EQ(state.offset_ns.load(), offset);
  EXPECT_EQ(state.steps_back.load(), 0u);
  // A nanosecond more (measured from the clock, not from the floor now above it): the clock
  // runs from it, and that counts as a backward step, once.
  EXPECT_EQ(clock_carry(state, clock.wall + kHold + 1, clock.mono, clock.wall, kHold),
            Carried::kRunFrom);
  EXPECT_EQ(state.offset_ns.load(), offset + kHold + 1);
  EXPECT_EQ(state.steps_back.load(), 1u);
  EXPECT_EQ(state.back_event_ns.load(), clock.wall - clock.mono);
  EXPECT_EQ(clock_carry(state, clock.wall + kHold + 1, clock.mono, clock.wall, kHold),
            Carried::kBelow);  // replayed again: the clock is already there
  EXPECT_EQ(state.steps_back.load(), 1u);
}

TEST_F(ClockTest, ReplayedReservationBeyondTheHoldRunsFromItWithoutASecondReport) {
  // A standby whose clock is 30 s behind its primary's replays a reservation.
  clock.now(state, local);
  clock.advance(kMs);
  const int64_t replayed = clock.wall + 30 * kSecond;
  EXPECT_EQ(clock_carry(state, replayed, clock.mono, clock.wall, kHold), Carried::kRunFrom);
  for (int i = 0; i < 2000; ++i) {
    const ClockTick t = clock.now(state, local);
    ASSERT_EQ(t.unix_ns, replayed + i * kMs) << i;
    ASSERT_EQ(t.event, ClockEvent::kNone) << i;  // the caller of clock_carry reports it
    clock.advance(kMs);
  }
  EXPECT_EQ(state.steps_back.load(), 1u);
}

TEST_F(ClockTest, RestartTwoMinutesBehindTheReservationRunsFromItAtRealTimeRate) {
  // The clock was set back 2 minutes across a restart; the reservation is where IDs were.
  const int64_t reserved = kWallStart + 2 * kMinute;
  EXPECT_EQ(clock_start_at(state, clock.mono, clock.wall, reserved, kHold), 2 * kMinute);
  EXPECT_EQ(state.steps_back.load(), 1u);              // beyond the hold: a step, counted once
  EXPECT_EQ(state.floor_base_ns.load(), kClockUnset);  // run from, not held by a floor
  const ClockTick first = clock.now(state, local);
  EXPECT_EQ(first.unix_ns, reserved);
  EXPECT_EQ(first.event, ClockEvent::kNone);  // the caller of clock_start_at reports it
  clock.advance(kSecond);
  const ClockTick second = clock.now(state, local);
  EXPECT_EQ(second.unix_ns, reserved + kSecond);  // no stall: real-time rate
  EXPECT_EQ(second.event, ClockEvent::kNone);
  // A minute more, one tick per ms, from this backend and from new ones: still real-time
  // rate, and no step reported while the wall clock stays behind.
  for (int i = 1; i <= 60000; ++i) {
    clock.advance(kMs);
    LocalClock fresh;
    const ClockTick t = clock.now(state, i % 2 ? local : fresh);
    ASSERT_EQ(t.unix_ns, reserved + kSecond + i * kMs) << i;
    ASSERT_EQ(t.event, ClockEvent::kNone) << i;
  }
  EXPECT_EQ(state.steps_back.load(), 1u);
  EXPECT_EQ(state.steps_forward.load(), 0u);
  EXPECT_EQ(clock.wall, reserved + 61 * kSecond - 2 * kMinute);  // still 2 minutes behind
  // The wall clock is corrected, to 30 s past the IDs' time: followed at once, and the step
  // reported is the 30 s the IDs' time moved, not the 2.5 minutes the wall clock did.
  clock.advance(kMs);
  const int64_t ids = reserved + 61 * kSecond + kMs;
  clock.wall = ids + 30 * kSecond;
  const ClockTick fwd = clock.now(state, local);
  EXPECT_EQ(fwd.event, ClockEvent::kStepForward);
  EXPECT_EQ(fwd.step_ns, 30 * kSecond);
  EXPECT_EQ(fwd.unix_ns, clock.wall);
  clock.advance(kMs);
  const ClockTick after = clock.now(state, local);
  EXPECT_EQ(after.unix_ns, clock.wall);
  EXPECT_EQ(after.event, ClockEvent::kNone);
  EXPECT_EQ(state.steps_forward.load(), 1u);
  EXPECT_EQ(state.steps_back.load(), 1u);
}

TEST_F(ClockTest, AnotherStepBackWhileRunningFromTheReservationIsReported) {
  // The step found at the start is not reported again, but a new one is.
  clock_start_at(state, clock.mono, clock.wall, kWallStart + 2 * kMinute, kHold);
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kNone);
  clock.advance(2 * kMs);
  clock.wall -= 10 * kMinute;
  const ClockTick t = clock.now(state, local);
  EXPECT_EQ(t.event, ClockEvent::kStepBack);
  EXPECT_EQ(t.unix_ns, kWallStart + 2 * kMinute + 2 * kMs);
  EXPECT_EQ(state.steps_back.load(), 2u);
}

TEST_F(ClockTest, APartialCorrectionOfTheClockIsNoStep) {
  // Running 2 min ahead of a wall clock that was set back; the wall clock is then stepped
  // forward by 1 min, still 1 min behind: no step is reported either way, and a later step
  // back is measured from the corrected reading.
  clock_start_at(state, clock.mono, clock.wall, kWallStart + 2 * kMinute, kHold);
  EXPECT_EQ(clock.now(state, local).event, ClockEvent::kNone);
  clock.advance(2 * kMs);
  clock.wall += kMinute;
  const ClockTick t = clock.now(state, local);
  EXPECT_EQ(t.event, ClockEvent::kNone);
  EXPECT_EQ(t.unix_ns, kWallStart + 2 * kMinute + 2 * kMs);
  EXPECT_EQ(state.steps_back.load(), 1u);
  EXPECT_EQ(state.steps_forward.load(), 0u);
  clock.advance(2 * kMs);
  clock.wall -= 30 * kSecond;
  const ClockTick back = clock.now(state, local);
  EXPECT_EQ(back.event, ClockEvent::kStepBack);
  EXPECT_EQ(back.step_ns, 90 * kSecond);  // from the IDs' time: 1 min + 30 s behind it
  EXPECT_EQ(state.steps_back.load(), 2u);
}

TEST_F(ClockTest, ReservationWithinTheHoldFadesAtThreeQuartersRate) {
  // A restart (after a crash) finds the reservation 1.2 s ahead of the wall clock: its own
  // reach, not a step. The clock keeps following the wall clock; a floor line, 0.75 ms
  // above the reservation at the start (the margin) and rising 3/4 as fast, keeps the
  // ticks above it until the wall clock catches up, 4 times (1.2 s + 0.75 ms) later.
  const int64_t gap = 1200 * kMs;
  const int64_t start_wall = clock.wall;
  const int64_t reserved = start_wall + gap;
  EXPECT_EQ(clock_start_at(state, clock.mono, clock.wall, reserved, kHold), gap);
  EXPECT_EQ(state.steps_back.load(), 0u);
  EXPECT_EQ(state.offset_ns.load(), clock.wall - clock.mono);
  const ClockTick first = clock.now(state, local);
  EXPECT_EQ(first.unix_ns, reserved + kMarginLead);
  EXPECT_EQ(first.event, ClockEvent::kNone);
  int64_t prev = first.unix_ns;
  for (int64_t t = 100000; t <= 6 * kSecond; t += 100000) {  // a tick every 100 us
    clock.advance(100000);
    const ClockTick tick = clock.now(state, local);
    ASSERT_EQ(tick.event, ClockEvent::kNone) << t;
    ASSERT_GT(tick.unix_ns, prev) << t;
    ASSERT_GE(tick.unix_ns, reserved) << t;
    const int64_t line = reserved + kMarginLead + t / 4 * 3;
    ASSERT_EQ(tick.unix_ns, std::max(line, start_wall + t)) << t;
    prev = tick.unix_ns;
    if (t == kSecond) {
      EXPECT_EQ(tick.unix_ns, reserved + kMarginLead + 750 * kMs);
    } else if (t == 4 * gap) {
      EXPECT_EQ(tick.unix_ns - clock.wall, kMarginLead);  // what is left: the margin's lead
    } else if (t == 4 * gap + 2900000) {
      EXPECT_EQ(tick.unix_ns - clock.wall, 25000);
    } else if (t >= 4 * gap + 3 * kMs) {
      ASSERT_EQ(tick.unix_ns, clock.wall) << t;  // the lead is gone
    }
  }
  EXPECT_EQ(state.steps_back.load(), 0u);
  EXPECT_EQ(state.steps_forward.load(), 0u);
}

TEST_F(ClockTest, RestartsWithinTheHoldLeaveNoLastingLead) {
  // Restart after restart, each finding the reservation 900 ms ahead: each lead fades, and
  // none is carried into the next run.
  for (int restart = 0; restart < 5; ++restart) {
    ClockState s;
    s.init();
    LocalClock l;
    const int64_t reserved = clock.wall + 900 * kMs;
    EXPECT_EQ(clock_start_at(s, clock.mono, clock.wall, reserved, kHold), 900 * kMs);
    EXPECT_EQ(s.steps_back.load(), 0u);
    EXPECT_EQ(clock.now(s, l).unix_ns, reserved + kMarginLead);
    clock.advance(kSecond);
    EXPECT_EQ(clock.now(s, l).unix_ns, reserved + kMarginLead + 750 * kMs);
    clock.advance(4 * 900 * kMs + 3 * kMs - kSecond);
    EXPECT_EQ(clock.now(s, l).unix_ns, clock.wall);
  }
  // A reservation at or behind the wall clock changes nothing.
  for (const int64_t reserved : {clock.wall, kWallStart}) {
    ClockState fresh;
    fresh.init();
    LocalClock l;
    EXPECT_EQ(clock_start_at(fresh, clock.mono, clock.wall, reserved, kHold), 0);
    EXPECT_EQ(fresh.offset_ns.load(), clock.wall - clock.mono);
    EXPECT_EQ(fresh.floor_base_ns.load(), kClockUnset);
    EXPECT_EQ(clock.now(fresh, l).unix_ns, clock.wall);
  }
}

TEST(GeneratorTest, EpochEdges) {
  Generator gen;
  // At the epoch itself IDs are issued (millisecond 0).
  EXPECT_EQ(gen.next(0).value >> kSeqBits, 0u);
  // The last millisecond of the range is usable to its last sequence, then it is over.
  Generator end;
  end.last.store((kMaxTimeMs << kSeqBits) | (kMaxSeq - 1));
  const NextResult last = end.next(kMaxTimeMs);
  EXPECT_EQ(last.step, Step::kIssued);
  EXPECT_EQ(pack(last.value >> kSeqBits, kMaxShard, last.value & kMaxSeq), uint64_t{INT64_MAX});
  EXPECT_EQ(end.next(kMaxTimeMs).step, Step::kExhausted);
  Generator past;
  EXPECT_EQ(past.next(kMaxTimeMs + 1).step, Step::kExhausted);
}

TEST(GeneratorTest, ThreadsSharingOneSlotNeverCollide) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200000;
  auto state = std::make_unique<SharedState>();
  state->init();
  std::atomic<uint64_t> &slot = state->shards[3].last;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t now = 1000;
      got[t].reserve(kPerThread);
      while (got[t].size() < kPerThread) {
        const NextResult r = next_state<kSeqBits>(slot, now, Limits{10, kMaxTimeMs, UINT64_MAX});
        if (r.step == Step::kIssued)
          got[t].push_back(r.value);
        else
          now += r.value;  // the fake clock catches up
      }
    });
  for (auto &th : threads) th.join();
  std::set<uint64_t> all;
  for (auto &v : got) {
    for (size_t i = 1; i < v.size(); ++i) ASSERT_LT(v[i - 1], v[i]);
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads} * kPerThread);
}

// ---- The monotonic clock through the time-stamp counter, on a fake counter and clock.

// A counter of 3 ticks per ns (3 GHz) and the monotonic clock it runs beside; mono() counts
// real readings, and mono_jitter_ticks moves the counter during one (a preempted reading).
struct FakeTsc {
  uint64_t tsc = 1000000;
  int64_t mono = 7000 * kMs;
  int real_reads = 0;
  uint64_t mono_jitter_ticks = 0;
  void advance(int64_t ns) {
    mono += ns;
    tsc += static_cast<uint64_t>(ns) * 3;
  }
  int64_t now(TscMono &c) {
    return c.now([this] { return tsc; },
                 [this] {
                   ++real_reads;
                   tsc += mono_jitter_ticks;
                   return mono;
                 });
  }
  // Reads every step_ns, steps times, each reading within a span of the clock; whether the
  // rate was discarded on the way.
  bool run_within_a_span(TscMono &c, int steps, int64_t step_ns) {
    bool discarded = false;
    for (int i = 0; i < steps; ++i) {
      advance(step_ns);
      const int64_t t = now(c);
      EXPECT_LE(std::llabs(t - mono), kTscSpanNs) << i;
      discarded = discarded || !c.calibrated();
    }
    return discarded;
  }
};

// Real readings until the rate is measured over 1 ms, then none within the span.
TEST(TscMono, ExtrapolatesOnlyOnceTheRateIsKnown) {
  TscMono c;
  FakeTsc f;
  EXPECT_EQ(f.now(c), f.mono);
  f.advance(kMs / 2);
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_EQ(f.real_reads, 2);
  EXPECT_FALSE(c.calibrated());
  f.advance(kMs / 2);
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_TRUE(c.calibrated());
  EXPECT_EQ(f.real_reads, 3);
  for (int i = 0; i < 999; ++i) {
    f.advance(1000);
    ASSERT_NEAR(static_cast<double>(f.now(c)), static_cast<double>(f.mono), 1.0);
  }
  EXPECT_EQ(f.real_reads, 3);  // 999 us from the last real reading: all extrapolated
  f.advance(2000);             // past the 1 ms span
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_EQ(f.real_reads, 4);
}

// A counter below the last real reading (another CPU's, or reset) is not extrapolated from.
TEST(TscMono, CounterBelowTheBaseReadsTheRealClock) {
  TscMono c;
  FakeTsc f;
  f.now(c);
  f.advance(kMs);
  f.now(c);
  ASSERT_TRUE(c.calibrated());
  const int reads = f.real_reads;
  f.tsc -= 100;
  f.advance(10);
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_EQ(f.real_reads, reads + 1);
}

// A real reading whose counter readings are far apart was preempted: it measures no rate and
// gives no base, so the next call reads the real clock again.
TEST(TscMono, PreemptedReadingIsNotExtrapolatedFrom) {
  TscMono c;
  FakeTsc f;
  f.mono_jitter_ticks = CounterLimits::for_hz(0).max_bracket + 1;
  f.now(c);
  f.advance(2 * kMs);
  f.now(c);
  EXPECT_FALSE(c.calibrated());
  f.mono_jitter_ticks = 0;
  f.now(c);
  f.advance(kMs);
  f.now(c);
  ASSERT_TRUE(c.calibrated());
  f.mono_jitter_ticks = CounterLimits::for_hz(0).max_bracket + 1;
  f.advance(2 * kMs);
  f.now(c);  // preempted: no base
  const int reads = f.real_reads;
  f.mono_jitter_ticks = 0;
  f.advance(10);
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_EQ(f.real_reads, reads + 1);
}

// A clock that jumps 10 minutes while the rate is measured gives a rate outside any
// counter's, which is not used.
TEST(TscMono, ImpossibleRateIsNotUsed) {
  TscMono c;
  FakeTsc f;
  f.now(c);
  f.advance(kMs);
  f.mono += 10 * kMinute;
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_FALSE(c.calibrated());
}

// Whatever the measured rate (here the clock ran 1 ms ahead while it was measured, so the
// rate is twice the true one), an extrapolated time is never below the last real reading
// nor more than a span past it.
TEST(TscMono, ExtrapolationStaysWithinOneSpanOfTheRealReading) {
  TscMono c;
  FakeTsc f;
  f.now(c);
  f.advance(kMs);
  f.mono += kMs;  // the clock jumps; the counter does not
  const int64_t base = f.now(c);
  ASSERT_TRUE(c.calibrated());
  const int reads = f.real_reads;
  int64_t last = base;
  int extrapolated = 0;
  for (int i = 0; i < 100; ++i) {
    f.tsc += 100000;
    const int64_t t = f.now(c);
    if (f.real_reads > reads) break;
    ASSERT_GE(t, last);
    ASSERT_LE(t, base + kTscSpanNs);
    last = t;
    ++extrapolated;
  }
  EXPECT_GE(extrapolated, 10);
  EXPECT_GT(last, base + kTscSpanNs / 2);
}

// The counter jumps an hour ahead of the clock (a hypervisor moved it, or the kernel gave up
// on it): the next real reading misses the prediction, the rate is discarded and measured
// again, and no reading is ever more than a span away from the clock.
TEST(TscMono, CounterJumpDiscardsTheRate) {
  TscMono c;
  FakeTsc f;
  for (int i = 0; i < 30; ++i) {
    f.advance(100000);
    f.now(c);
  }
  ASSERT_TRUE(c.calibrated());
  f.tsc += 3600ull * 1000000000 * 3;
  EXPECT_TRUE(f.run_within_a_span(c, 100, 100000));
  EXPECT_TRUE(c.calibrated());  // measured again since
  f.advance(100000);
  EXPECT_NEAR(static_cast<double>(f.now(c)), static_cast<double>(f.mono), 1000.0);
}

// The counter ran 1 ms ahead while the first rate was measured, so the rate is half the
// true one: the first real reading after it misses and discards it; readings stay within
// a span of the clock, and the rate measured next is right.
TEST(TscMono, WrongFirstRateIsCaughtAtTheNextRealReading) {
  TscMono c;
  FakeTsc f;
  f.now(c);
  f.advance(kMs);
  f.tsc += 3 * kMs;  // 1 ms of extra ticks
  f.now(c);
  ASSERT_TRUE(c.calibrated());
  EXPECT_TRUE(f.run_within_a_span(c, 200, 50000));
  for (int i = 0; i < 100; ++i) {
    f.advance(50000);
    ASSERT_NEAR(static_cast<double>(f.now(c)), static_cast<double>(f.mono), 1000.0) << i;
  }
}

// A counter that restarts from below the measurement's start (a reset) while the clock
// moves on neither divides by zero nor measures a rate from the wrapped difference.
TEST(TscMono, CounterResetRestartsTheMeasurement) {
  TscMono c;
  FakeTsc f;
  f.now(c);
  f.advance(2 * kMs);
  f.tsc = 500;  // below the first reading's counter
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_FALSE(c.calibrated());
  f.advance(kMs);
  EXPECT_EQ(f.now(c), f.mono);
  EXPECT_TRUE(c.calibrated());
  f.advance(1000);
  EXPECT_NEAR(static_cast<double>(f.now(c)), static_cast<double>(f.mono), 1.0);
}

// The clock is slewed by 500 ppm against the counter, and read every 100 ns for 10 ms:
// real readings for the first millisecond, then about one per span, and every time within
// 1 us of the clock.
TEST(TscMono, SlewedClockIsFollowedWithinAMicrosecond) {
  TscMono c;
  FakeTsc f;
  for (int i = 0; i < 100000; ++i) {
    f.tsc += 300;                   // 100 ns of counter
    f.mono += 100 + (i % 20 == 0);  // 100.05 ns of clock
    ASSERT_NEAR(static_cast<double>(f.now(c)), static_cast<double>(f.mono), 1000.0) << i;
  }
  EXPECT_TRUE(c.calibrated());
  EXPECT_LT(f.real_reads, 10000 + 20);
}

// A counter whose nominal rate the CPU tells (ARM64's generic timer): 24 MHz, common on
// ARM64 parts, is 41.7 ns per tick, outside what an unknown counter may run at; with the
// nominal rate it is measured and used, and a counter that runs a quarter fast is not.
struct FakeCounter {
  uint64_t hz;
  int64_t mono = 7000 * kMs;
  int64_t elapsed = 0;  // ns since the start
  uint64_t tsc() const {
    return 1000 + static_cast<uint64_t>(static_cast<unsigned __int128>(elapsed) * hz / 1000000000);
  }
  void advance(int64_t ns) {
    mono += ns;
    elapsed += ns;
  }
  int64_t now(TscMono &c) {
    return c.now([this] { return tsc(); }, [this] { return mono; });
  }
};

TEST(TscMono, NominalRateBoundsTheMeasuredOne) {
  TscMono unknown;  // x86-64's limits: 0.1 to 10 ns per tick
  TscMono nominal(24000000);
  FakeCounter a{24000000}, b{24000000};
  for (int i = 0; i < 30; ++i) {
    a.advance(100000);
    a.now(unknown);
    b.advance(100000);
    b.now(nominal);
  }
  EXPECT_FALSE(unknown.calibrated());
  ASSERT_TRUE(nominal.calibrated());
  for (int i = 0; i < 900; ++i) {
    b.advance(1000);
    ASSERT_NEAR(static_cast<double>(b.now(nominal)), static_cast<double>(b.mono), 100.0) << i;
  }
  TscMono fast(24000000);
  FakeCounter f{30000000};
  for (int i = 0; i < 30; ++i) {
    f.advance(100000);
    f.now(fast);
  }
  EXPECT_FALSE(fast.calibrated());
}

TEST(TscMono, LimitsFromTheNominalRate) {
  const CounterLimits x86 = CounterLimits::for_hz(0);
  EXPECT_EQ(x86.min_mult, (uint64_t{1} << 32) / 10);
  EXPECT_EQ(x86.max_mult, uint64_t{10} << 32);
  EXPECT_EQ(x86.max_bracket, 20000u);
  const CounterLimits ghz = CounterLimits::for_hz(1000000000);  // ARMv8.6 and later
  EXPECT_LT(ghz.min_mult, uint64_t{1} << 32);
  EXPECT_GT(ghz.max_mult, uint64_t{1} << 32);
  EXPECT_EQ(ghz.max_bracket, 10001u);                        // 10 us
  const CounterLimits mhz = CounterLimits::for_hz(1000000);  // 1000 ns per tick
  EXPECT_LT(mhz.min_mult, uint64_t{1000} << 32);
  EXPECT_GT(mhz.max_mult, uint64_t{1000} << 32);
  EXPECT_EQ(mhz.max_bracket, 11u);
}

#if defined(SNOWFLAKE_CPU_COUNTER)
// ---- This CPU's counter (rdtsc, or CNTVCT_EL0 on ARM64, where qemu-user emulates it).

int64_t real_mono() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// ns per tick against the monotonic clock over about 20 ms, from the tightest of a few
// brackets at each end (the machine may preempt a reading).
double measured_ns_per_tick() {
  auto point = [] {
    uint64_t best_width = ~uint64_t{0}, at = 0;
    int64_t m = 0;
    for (int i = 0; i < 20; ++i) {
      const uint64_t t1 = read_cpu_counter();
      const int64_t mono = real_mono();
      const uint64_t t2 = read_cpu_counter();
      if (t2 >= t1 && t2 - t1 < best_width) {
        best_width = t2 - t1;
        at = t1 + (t2 - t1) / 2;
        m = mono;
      }
    }
    return std::make_pair(at, m);
  };
  const auto [t0, m0] = point();
  while (real_mono() - m0 < 20 * kMs) {
  }
  const auto [t1, m1] = point();
  return static_cast<double>(m1 - m0) / static_cast<double>(t1 - t0);
}

// The counter runs within the limits TscMono puts on it: on ARM64 within 2 % of CNTFRQ_EL0.
TEST(CpuCounter, RunsWithinItsLimits) {
  const uint64_t hz = cpu_counter_hz();
  const CounterLimits limits = CounterLimits::for_hz(hz);
  bool within = false;
  double ns = 0;
  for (int attempt = 0; attempt < 5 && !within; ++attempt) {
    ns = measured_ns_per_tick();
    const double mult = ns * 4294967296.0;
    within = mult >= static_cast<double>(limits.min_mult) &&
             mult <= static_cast<double>(limits.max_mult) &&
             (hz == 0 || std::fabs(ns * static_cast<double>(hz) / 1e9 - 1) < 0.02);
  }
  std::printf("[   INFO   ] counter: %.3f ns per tick measured, nominal %s\n", ns,
              hz == 0 ? "unknown (x86-64)" : (std::to_string(hz) + " Hz (CNTFRQ_EL0)").c_str());
  EXPECT_TRUE(within) << ns << " ns per tick";
#if defined(__aarch64__)
  EXPECT_GE(hz, 1000000u);  // the glue uses the counter only then
#endif
}

// TscMono on the real counter and clock: it measures a rate, and each reading lies within
// one span of the clock read around it.
TEST(CpuCounter, TscMonoFollowsTheClock) {
  TscMono c(cpu_counter_hz());
  int64_t worst = 0;
  int reads = 0;
  const int64_t start = real_mono();
  while (real_mono() - start < 50 * kMs) {
    const int64_t before = real_mono();
    const int64_t t = c.now([] { return read_cpu_counter(); }, real_mono);
    const int64_t after = real_mono();
    const int64_t off = t < before ? before - t : t > after ? t - after : 0;
    worst = std::max(worst, off);
    ++reads;
  }
  std::printf(
      "[   INFO   ] %d readings through TscMono, the farthest %lld ns outside the clock "
      "read around it\n",
      reads, static_cast<long long>(worst));
  EXPECT_TRUE(c.calibrated());
  EXPECT_LE(worst, kTscSpanNs);
}
#endif

// clock_now takes the hot path's reading from fast() and compares with the wall clock using
// real readings only.
TEST_F(ClockTest, WallComparisonUsesRealReadings) {
  int fast_reads = 0, real_reads = 0;
  clock.advance(kMs);
  const ClockTick t = clock_now(
      state, local,
      [&] {
        ++fast_reads;
        return clock.mono + 777;
      },
      [&] {
        ++real_reads;
        return clock.mono;
      },
      [&] { return clock.wall; });
  EXPECT_EQ(fast_reads, 1);
  EXPECT_EQ(real_reads, 2);          // the pair around the wall clock
  EXPECT_EQ(t.unix_ns, clock.wall);  // the offset comes from real readings, and so did m
  clock.advance(kMs / 10);
  const ClockTick u = clock_now(
      state, local,
      [&] {
        ++fast_reads;
        return clock.mono + 777;
      },
      [&] {
        ++real_reads;
        return clock.mono;
      },
      [&] { return clock.wall; });
  EXPECT_EQ(fast_reads, 2);
  EXPECT_EQ(real_reads, 2);  // within the millisecond: no comparison
  EXPECT_EQ(u.unix_ns, clock.wall + 777);
}

TEST(Reservation, TargetReachesAWindowAndAQuarterPastNeed) {
  // Steady load: one write per window of ID time, since requests come a quarter window
  // before the reservation.
  EXPECT_EQ(reservation_target(10000, 10000, 1000, 0, 0), 11250u);
  EXPECT_FALSE(reservation_due(11250 - 251, 11250, 1000, 0));
  EXPECT_TRUE(reservation_due(11250 - 250, 11250, 1000, 0));
  // A stream running 600 ms ahead of the clock asks 600 ms earlier.
  EXPECT_TRUE(reservation_due(11250 - 850, 11250, 1000, 600));
  EXPECT_FALSE(reservation_due(11250 - 851, 11250, 1000, 600));
  EXPECT_EQ(reservation_target(11000, 11000, 1000, 0, 0) - 11250, 1000u);
  // Slow storage: twice the last write's time.
  EXPECT_EQ(reservation_target(10000, 10000, 1000, 900, 0), 11800u);
  // A burst running ahead of the clock: three times its lead further, so that a burst of any
  // length takes a few writes (the lead doubling between them), not one per millisecond.
  EXPECT_EQ(reservation_target(13000, 10000, 1000, 0, 0), 13000u + 1250 + 9000);
  uint64_t reserved = 11250;
  int writes = 0;
  for (uint64_t need = 10000; need < 20000; ++need)  // IDs 10 s ahead, made at once
    if (reservation_due(need, reserved, 1000, need - 10000)) {
      reserved = reservation_target(need, 10000, 1000, 0, reserved);
      ++writes;
    }
  EXPECT_LE(writes, 6);
}

TEST(Reservation, TargetNeverBelowWhatIsPublished) {
  // A writer restarted after a burst (its request long served) or a smaller window: the
  // target stays at the reservation already published, above which no ID exists yet.
  EXPECT_EQ(reservation_target(10000, 10000, 1000, 0, 25000), 25000u);
  EXPECT_EQ(reservation_target(10000, 10000, 10, 0, 10100), 10100u);
}

TEST(Reservation, ReplayOnlyRaisesAndIsSafeToRepeat) {
  Reservation r;
  r.init();
  r.reserved_unix_ms.store(5000);
  EXPECT_TRUE(r.raise_from_replay(7000));
  EXPECT_FALSE(r.raise_from_replay(7000));  // replayed twice: nothing changes
  EXPECT_FALSE(r.raise_from_replay(6000));  // an older record: never lowered
  EXPECT_EQ(r.reserved_unix_ms.load(), 7000u);
  EXPECT_EQ(r.replayed_unix_ms.load(), 7000u);
  ClockState c;
  c.init();
  const int64_t mono = 5000 * kMs;
  EXPECT_TRUE(clock_raise_floor(c, 7000 * kMs, mono));
  EXPECT_FALSE(clock_raise_floor(c, 6000 * kMs, mono));
  EXPECT_FALSE(clock_raise_floor(c, 7000 * kMs, mono));
  EXPECT_FALSE(clock_raise_floor(c, 7000 * kMs, mono + kSecond));  // the same, replayed later
  EXPECT_EQ(clock_floor_at(c, mono - kMs), 7000 * kMs);
}

TEST(Reservation, RequestsOnlyRise) {
  Reservation r;
  r.init();
  EXPECT_TRUE(r.request(100));
  EXPECT_FALSE(r.request(100));  // not raised: no need to wake the writer again
  EXPECT_FALSE(r.request(50));
  EXPECT_TRUE(r.request(101));
  EXPECT_EQ(r.requested_unix_ms.load(), 101u);
}

TEST(Reservation, HighWaterIsTheLatestValueOfAnyStream) {
  auto state = std::make_unique<SharedState>();
  state->init();
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), 0u);  // nothing issued
  state->shards[7].last.store((uint64_t{5000} << kSeqBits) | 3);
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kDefaultEpochMs + 5000);
  state->streams.uuid.last.store((kDefaultEpochMs + 9000) << kUuidCounterBits);
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kDefaultEpochMs + 9000);
  state->streams.ulid.hi.store((kDefaultEpochMs + 12000) << (kUlidRandomBits - 64));
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kDefaultEpochMs + 12000);
}

TEST_F(ClockTest, PeekReadsTheIdsTimeWithoutMovingTheClock) {
  EXPECT_EQ(clock_peek(state, clock.mono), kClockUnset);  // not started
  clock_start_at(state, clock.mono, clock.wall, kWallStart + 500 * kMs, kHold);
  EXPECT_EQ(clock_peek(state, clock.mono), kWallStart + 500 * kMs + kMarginLead);  // the floor line
  clock.advance(kSecond);
  EXPECT_EQ(clock_peek(state, clock.mono), kWallStart + 500 * kMs + kMarginLead + 750 * kMs);
  clock.advance(kSecond + 3 * kMs);  // the lead, 500.75 ms, faded in 4 times that
  EXPECT_EQ(clock_peek(state, clock.mono), clock.wall);
  // A stepped wall clock is not looked at: only clock_now, in the processes that issue IDs,
  // moves the offset and reports the step.
  clock.wall += 5 * kSecond;
  EXPECT_EQ(clock_peek(state, clock.mono), clock.wall - 5 * kSecond);
  EXPECT_EQ(state.steps_forward.load(), 0u);
  EXPECT_EQ(clock.now(state, local).unix_ns, clock.wall);
  EXPECT_EQ(state.steps_forward.load(), 1u);
}

TEST(Reservation, AtExitComesDownToJustAboveTheLastValueNeverBelowTheBase) {
  EXPECT_EQ(reservation_at_exit(1500, 0, 3000), 1501u);     // just above the last value
  EXPECT_EQ(reservation_at_exit(1500, 2000, 3000), 2000u);  // never below the base
  EXPECT_EQ(reservation_at_exit(0, 2000, 3000), 2000u);     // nothing issued: the base
  EXPECT_EQ(reservation_at_exit(2998, 0, 3000), 2999u);
  // Already as low as it may be: 0, it stays.
  EXPECT_EQ(reservation_at_exit(2999, 0, 3000), 0u);
  EXPECT_EQ(reservation_at_exit(5000, 0, 3000), 0u);
  EXPECT_EQ(reservation_at_exit(0, 3000, 3000), 0u);
  EXPECT_EQ(reservation_at_exit(0, 0, 3000), 0u);  // no base, nothing issued: nothing known
}

TEST(Reservation, IdleRestartsStayAtTheBaseAndNeverStack) {
  // Each start, the writer extends the reservation a window and a quarter (1.25 s) past the
  // one it loaded; no value is issued; the postmaster exits. Kept as it is, four restarts
  // would leave the next start 5 s ahead of where any value is.
  const uint64_t window_ms = 1000;
  uint64_t on_disk = static_cast<uint64_t>(kWallStart / kMs) + 900;  // a previous run left
  uint64_t first_exit = 0;
  for (int start = 0; start < 4; ++start) {
    auto state = std::make_unique<SharedState>();
    state->init();
    Reservation &r = state->reservation;
    r.loaded_unix_ms.store(on_disk);  // as load_reservation does
    r.reserved_unix_ms.store(on_disk);
    r.reserved_unix_ms.store(  // the writer's first extension
        reservation_target(on_disk, on_disk, window_ms, 0, r.reserved_unix_ms.load()));
    ASSERT_EQ(r.reserved_unix_ms.load(), on_disk + 1250) << start;
    const uint64_t high = high_water_unix_ms(*state, kDefaultEpochMs);
    ASSERT_EQ(high, 0u) << start;
    const uint64_t target =
        reservation_at_exit(high, std::max(r.loaded_unix_ms.load(), r.replayed_unix_ms.load()),
                            r.reserved_unix_ms.load());
    ASSERT_NE(target, 0u) << start;
    on_disk = target;
    if (start == 0) first_exit = on_disk;
    EXPECT_EQ(on_disk, first_exit) << start;
  }
  EXPECT_EQ(first_exit, static_cast<uint64_t>(kWallStart / kMs) + 900);
  // A run that issues a value moves it to just above that value, and idle runs stay there.
  auto state = std::make_unique<SharedState>();
  state->init();
  state->reservation.loaded_unix_ms.store(on_disk);
  state->shards[2].last.store((on_disk + 300 - kDefaultEpochMs) << kSeqBits);
  const uint64_t issued =
      reservation_at_exit(high_water_unix_ms(*state, kDefaultEpochMs), on_disk, on_disk + 1250);
  EXPECT_EQ(issued, on_disk + 301);
  for (int start = 0; start < 3; ++start)
    EXPECT_EQ(reservation_at_exit(0, issued, issued + 1250), issued) << start;
}

TEST(Reservation, InitClearsEveryField) {
  // Shared memory need not come zeroed.
  alignas(Reservation) unsigned char buf[sizeof(Reservation)];
  std::memset(buf, 0xab, sizeof buf);
  Reservation *r = new (buf) Reservation;
  r->init();
  EXPECT_EQ(r->reserved_unix_ms.load(), 0u);
  EXPECT_EQ(r->requested_unix_ms.load(), 0u);
  EXPECT_EQ(r->writer.load(), nullptr);
  EXPECT_EQ(r->writes.load(), 0u);
  EXPECT_EQ(r->last_write_ms.load(), 0u);
  EXPECT_EQ(r->write_failures.load(), 0u);
  EXPECT_EQ(r->write_errno.load(), 0);
  EXPECT_EQ(r->waits.load(), 0u);
  EXPECT_EQ(r->lead_waits.load(), 0u);
  EXPECT_EQ(r->replayed_unix_ms.load(), 0u);
  EXPECT_EQ(r->observed_unix_ms.load(), 0u);
  EXPECT_EQ(r->observed_moves.load(), 0u);
  EXPECT_EQ(r->observe_skipped.load(), 0u);
  EXPECT_EQ(r->loaded_unix_ms.load(), 0u);
  EXPECT_EQ(r->writer_pid.load(), 0);
  EXPECT_EQ(r->busy_since_mono_ms.load(), 0u);
  EXPECT_EQ(r->refusal.load(), kNotRefused);
  EXPECT_EQ(r->file_epoch_ms.load(), 0u);
  r->~Reservation();
}

// IDs read the counter only where the kernel keeps time by it: a VM's kvm-clock, whose
// kernel may have been told the counter is unstable, keeps clock_gettime().
TEST(TscMono, CounterOnlyWhereTheKernelKeepsTimeByIt) {
  EXPECT_FALSE(counter_is_kernel_clock("kvm-clock\n", 0));
  EXPECT_FALSE(counter_is_kernel_clock("hpet\n", 0));
  EXPECT_FALSE(counter_is_kernel_clock("", 0));
#if defined(__x86_64__)
  EXPECT_TRUE(counter_is_kernel_clock("tsc\n", 0));
  EXPECT_FALSE(counter_is_kernel_clock("arch_sys_counter\n", 0));
#elif defined(__aarch64__)
  EXPECT_TRUE(counter_is_kernel_clock("arch_sys_counter\n", 24000000));
  EXPECT_FALSE(counter_is_kernel_clock("arch_sys_counter\n", 999999));  // no usable rate
  EXPECT_FALSE(counter_is_kernel_clock("tsc\n", 24000000));
#endif
}
