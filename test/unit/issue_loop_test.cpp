// Unit tests of the one issue loop (issue_loop.hpp) and the block line (block_line.hpp), with
// a fake clock, a fake reservation and a fake lease.
#include "core/block_line.hpp"
#include "core/issue_loop.hpp"
#include "core/layout.hpp"
#include "core/shared_state.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace snowflake;

namespace {

struct Raised : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The server's side, faked: each call is logged; waits move the fake clock.
struct FakeEnv {
  LeaseSlot *leased = nullptr;
  uint64_t now_unix_ms = 1000000;
  int64_t mono_ns = 1;
  std::deque<bool> clock_events;  // true: the next reading reports a step
  uint64_t reserved = UINT64_MAX;
  std::vector<std::string> log;
  std::function<void()> on_await_lease;
  std::function<void()> on_step;  // after the kind's step, before the loop's check
  std::function<void()> on_read;  // while the clock is read
  uint64_t after_issue_high = 0, after_issue_now = 0;

  LeaseSlot *lease() const { return leased; }
  bool read_clock(ClockReading *out) {
    if (!clock_events.empty()) {
      const bool event = clock_events.front();
      clock_events.pop_front();
      if (event) {
        log.push_back("clock step");
        return false;
      }
    }
    if (on_read) on_read();
    out->unix_ms = now_unix_ms;
    out->mono_ns = mono_ns;
    return true;
  }
  uint64_t reserved_unix_ms() const { return reserved; }
  void await_lease() {
    log.push_back("await lease");
    if (!on_await_lease) throw Raised("no lease");
    on_await_lease();
  }
  void await_cover(uint64_t unix_ms) {
    log.push_back("cover " + std::to_string(unix_ms));
    reserved = unix_ms + 1000;
    leased->mark_unix_ms.store(unix_ms + 1000);
  }
  void await_reservation(uint64_t unix_ms) {
    log.push_back("reserve " + std::to_string(unix_ms));
    reserved = unix_ms + 1000;
  }
  void wait_for_clock(uint64_t ms) {
    log.push_back("wait " + std::to_string(ms));
    now_unix_ms += ms;
    mono_ns += static_cast<int64_t>(ms) * 1000000;
  }
  void wait_in_line(uint64_t ms) {
    log.push_back("in line " + std::to_string(ms));
    now_unix_ms += ms;
    mono_ns += static_cast<int64_t>(ms) * 1000000;
  }
  void after_issue(uint64_t high, uint64_t now) {
    after_issue_high = high;
    after_issue_now = now;
  }
};

// A snowflake shard as a kind: one word, the epoch as origin.
struct ShardKind {
  std::atomic<uint64_t> last{0};
  uint64_t epoch = 1000;
  uint64_t lead = 1024;
  FakeEnv *env = nullptr;
  std::vector<uint64_t> words_seen;  // the lease word each step was given
  std::vector<uint64_t> limits_seen;

  uint64_t origin_unix_ms() const { return epoch; }
  [[noreturn]] void raise_before_origin(uint64_t) { throw Raised("before origin"); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { throw Raised("exhausted"); }
  IssueStep step(const IssueInput &in) {
    words_seen.push_back(in.lease_word);
    limits_seen.push_back(in.limit_unix_ms);
    const NextResult r =
        next_state<kSeqBits>(last, in.now_unix_ms - epoch,
                             Limits{lead, kMaxTimeMs, limit_since(in.limit_unix_ms, epoch)});
    if (env != nullptr && env->on_step) env->on_step();
    switch (r.step) {
      case Step::kIssued:
        return IssueStep{r.step, r.value, (r.value >> kSeqBits) + epoch};
      case Step::kReserve:
        return IssueStep{r.step, r.value + epoch, 0};
      default:
        return IssueStep{r.step, r.value, 0};
    }
  }
};

void open_lease(LeaseSlot &lease, uint32_t generation, uint32_t first, uint64_t mark) {
  lease.word.store(lease_word(generation, first, 1));
  lease.deadline_mono_ns.store(INT64_MAX);
  lease.mark_unix_ms.store(mark);
}

}  // namespace

TEST(IssueLoopTest, ConfigModeIssuesAndAsksForTheReservation) {
  FakeEnv env;
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.value >> kSeqBits, env.now_unix_ms - kind.epoch);
  EXPECT_EQ(env.after_issue_high, env.now_unix_ms);
  EXPECT_EQ(env.after_issue_now, env.now_unix_ms);
  EXPECT_EQ(kind.words_seen, std::vector<uint64_t>{0});
  EXPECT_TRUE(env.log.empty());
}

TEST(IssueLoopTest, AClockStepIsReportedAndTheClockReadAgain) {
  FakeEnv env;
  env.clock_events = {true, false};
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(env.log, std::vector<std::string>{"clock step"});
  EXPECT_EQ(kind.words_seen.size(), 1u);  // no step was taken on the reading that stepped
}

TEST(IssueLoopTest, AClockBeforeTheKindsOriginIsRefused) {
  FakeEnv env;
  ShardKind kind;
  kind.epoch = env.now_unix_ms + 1;
  EXPECT_THROW(issue_loop(env, kind), Raised);
  EXPECT_TRUE(kind.words_seen.empty());
}

TEST(IssueLoopTest, TheReservationIsExtendedBeforeAValueReachesIt) {
  FakeEnv env;
  env.reserved = env.now_unix_ms;  // the clock's millisecond is not covered
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(env.log, std::vector<std::string>{"reserve " + std::to_string(env.now_unix_ms)});
  EXPECT_LT(r.value >> kSeqBits, env.reserved - kind.epoch);
}

TEST(IssueLoopTest, AtTheLeadBoundTheClockIsWaitedFor) {
  FakeEnv env;
  ShardKind kind;
  kind.lead = 0;
  const uint64_t start = env.now_unix_ms;
  for (int i = 0; i < 1025; ++i) issue_loop(env, kind);
  EXPECT_EQ(env.log, std::vector<std::string>{"wait 1"});
  EXPECT_EQ(kind.last.load() >> kSeqBits, start + 1 - kind.epoch);
}

TEST(IssueLoopTest, TheLayoutsEndIsTheKindsToSay) {
  FakeEnv env;
  ShardKind kind;
  kind.last.store(((kMaxTimeMs + 1) << kSeqBits) - 1);  // the last value of the layout
  EXPECT_THROW(issue_loop(env, kind), Raised);
}

TEST(IssueLoopTest, LeaseModeWaitsForALease) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  env.leased = &lease;
  env.on_await_lease = [&] { open_lease(lease, 1, 7, UINT64_MAX); };
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(env.log, std::vector<std::string>{"await lease"});
  EXPECT_EQ(kind.words_seen, std::vector<uint64_t>{lease_word(1, 7, 1)});
}

TEST(IssueLoopTest, LeaseModeRefusesPastTheDeadline) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, UINT64_MAX);
  lease.deadline_mono_ns.store(env.mono_ns);  // closed at this reading
  env.leased = &lease;
  ShardKind kind;
  EXPECT_THROW(issue_loop(env, kind), Raised);
  EXPECT_TRUE(kind.words_seen.empty());  // nothing was taken
}

TEST(IssueLoopTest, LeaseModeLimitIsTheLowerOfReservationAndMark) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, env.now_unix_ms + 500);
  env.leased = &lease;
  env.reserved = env.now_unix_ms + 900;
  ShardKind kind;
  issue_loop(env, kind);
  EXPECT_EQ(kind.limits_seen, std::vector<uint64_t>{env.now_unix_ms + 500});
}

TEST(IssueLoopTest, LeaseModeExtendsTheMarkThroughTheLease) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, env.now_unix_ms);  // the mark does not cover the clock
  env.leased = &lease;
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(env.log, std::vector<std::string>{"cover " + std::to_string(env.now_unix_ms)});
}

// The lease guarantee: a value issued while the lease changed, or its deadline passed, is
// dropped and never returned.
TEST(IssueLoopTest, AValueIssuedWhileTheLeaseChangedIsDropped) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, UINT64_MAX);
  env.leased = &lease;
  ShardKind kind;
  kind.env = &env;
  int steps = 0;
  env.on_step = [&] {
    if (++steps == 1) lease.word.store(lease_word(2, 9, 1));  // a new lease meanwhile
  };
  const IssueStep r = issue_loop(env, kind);
  ASSERT_EQ(steps, 2);
  EXPECT_EQ(kind.words_seen, (std::vector<uint64_t>{lease_word(1, 7, 1), lease_word(2, 9, 1)}));
  // The first value was taken from the word and dropped: the one returned is the second.
  EXPECT_EQ(r.value & kMaxSeq, 1u);
}

TEST(IssueLoopTest, AValueIssuedPastTheDeadlineIsDropped) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, UINT64_MAX);
  env.leased = &lease;
  ShardKind kind;
  kind.env = &env;
  env.on_step = [&] { lease.deadline_mono_ns.store(env.mono_ns); };  // closes at this reading
  EXPECT_THROW(issue_loop(env, kind), Raised);  // dropped, then no lease to wait for
  EXPECT_EQ(env.log, std::vector<std::string>{"await lease"});
  EXPECT_EQ(env.after_issue_high, 0u);
}

namespace {

struct Shard {
  std::atomic<uint64_t> last{0};
};

struct Line {
  BlockLine line;
  Line() { line.init(); }
};

Limits lead_limits(uint64_t lead) { return Limits{lead, kMaxTimeMs, UINT64_MAX}; }

constexpr uint64_t kSpan = shard_span(5, 1);  // the blocks' shard in these tests

}  // namespace

TEST(BlockLineTest, ABlockThatFitsTakesNoPlace) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  LinePlace p;
  const RangeBlockResult r =
      line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, 1000, 100, 100, lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(p.slot, -1);
  EXPECT_EQ(l.line.waiting.load(), 0u);
}

TEST(BlockLineTest, AWaitingBlockHoldsItsPlaceAndLaterOnesGoBehind) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  s.last.store(uint64_t{150} << kSeqBits);  // 50 ms ahead of the clock at 100
  LinePlace first, second, small;
  // 100 ms of IDs need the stream at the clock: the first waits, in line.
  RangeBlockResult r = line_take_block<kSeqBits>(l.line, first, &s, 1, kSpan, floor,
                                                 100 * 1024 - 1022, 100, 1000, lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kWait);
  EXPECT_GE(first.slot, 0);
  // A small block would fit, but goes behind it.
  r = line_take_block<kSeqBits>(l.line, small, &s, 1, kSpan, floor, 10, 100, 1000,
                                lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kInLine);
  EXPECT_EQ(r.block.value, 1u);
  EXPECT_GE(small.slot, 0);
  EXPECT_GT(small.ticket, first.ticket);
  EXPECT_EQ(s.last.load(), uint64_t{150} << kSeqBits);  // nothing taken
  // The clock reaches the stream: the head takes; the next in line then.
  r = line_take_block<kSeqBits>(l.line, small, &s, 1, kSpan, floor, 10, 150, 1050,
                                lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kInLine);  // not its turn yet
  r = line_take_block<kSeqBits>(l.line, first, &s, 1, kSpan, floor, 100 * 1024 - 1022, 150, 1050,
                                lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kIssued);
  line_leave(l.line, first, 1050, true);
  r = line_take_block<kSeqBits>(l.line, small, &s, 1, kSpan, floor, 10, 150, 1050,
                                lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kIssued);
  line_leave(l.line, small, 1050, true);
  EXPECT_EQ(l.line.waiting.load(), 0u);
  EXPECT_EQ(l.line.served.load(), 2u);
  (void)second;
}

TEST(BlockLineTest, AHeadThatWaitedPausesSingleIDsUntilItLeaves) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  s.last.store(uint64_t{600} << kSeqBits);
  LinePlace p;
  const uint64_t n = 100 * 1024 - 1022;
  line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, n, 100, 1000, lead_limits(100));
  EXPECT_FALSE(l.line.singles_paused(kSpan));
  line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, n, 100 + kBlockCapAfterMs - 1,
                            1000 + kBlockCapAfterMs - 1, lead_limits(100));
  EXPECT_FALSE(l.line.singles_paused(kSpan));
  line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, n, 100 + kBlockCapAfterMs,
                            1000 + kBlockCapAfterMs, lead_limits(100));
  EXPECT_TRUE(l.line.singles_paused(kSpan));
  line_leave(l.line, p, 1000, false);  // cancelled
  EXPECT_FALSE(l.line.singles_paused(kSpan));
  EXPECT_EQ(l.line.waiting.load(), 0u);
  EXPECT_EQ(l.line.served.load(), 0u);
}

// The promise of the line: beside single IDs at the shard's capacity (here, every millisecond
// filled at its start), the largest block of a 100 ms bound is taken within the cap's delay
// and max_lead; and single IDs keep their whole rate below the lead bound meanwhile.
TEST(BlockLineTest, TheLargestBlockIsTakenBesideSinglesAtCapacity) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  const uint64_t max_lead = 1024, start = 5000;
  const uint64_t n = 101 * 1024 - 1023;  // the largest block of a 100 ms bound
  ASSERT_TRUE(block_fits_lead<kSeqBits>(n, 100));
  ASSERT_FALSE(block_fits_lead<kSeqBits>(n + 1, 100));
  s.last.store((start + max_lead) << kSeqBits);  // singles already at their lead bound
  LinePlace p;
  uint64_t taken_at = 0;
  for (uint64_t now = start; now < start + 3000 && taken_at == 0; ++now) {
    // Singles, flat out: 2,048 tries a millisecond (twice the capacity), unless paused.
    for (int i = 0; i < 2048 && !l.line.singles_paused(kSpan); ++i)
      next_state<kSeqBits>(s.last, now, lead_limits(max_lead));
    const RangeBlockResult r =
        line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, n, now, now, lead_limits(100));
    if (r.block.step == Step::kIssued) {
      taken_at = now;
      EXPECT_LE(r.block.value >> kSeqBits, now + 100);
      line_leave(l.line, p, now, true);
    }
  }
  ASSERT_NE(taken_at, 0u);
  EXPECT_LE(taken_at - start, kBlockCapAfterMs + max_lead + 2);
  EXPECT_FALSE(l.line.singles_paused(kSpan));
}

TEST(BlockLineTest, PlacesAreFirstComeFirstServedAcrossThreads) {
  Line l;
  std::vector<LinePlace> places(16);
  std::vector<std::thread> threads;
  for (auto &p : places) threads.emplace_back([&] { ASSERT_TRUE(line_join(l.line, p, kSpan, 0)); });
  for (auto &t : threads) t.join();
  EXPECT_EQ(l.line.waiting.load(), 16u);
  // Exactly one head at a time, in ticket order.
  for (size_t served = 0; served < places.size(); ++served) {
    int heads = 0;
    LinePlace *head = nullptr;
    for (auto &p : places)
      if (p.slot >= 0 && line_head(l.line, p.ticket, kSpan)) {
        ++heads;
        head = &p;
      }
    ASSERT_EQ(heads, 1);
    for (auto &p : places) {
      if (p.slot >= 0) {
        EXPECT_LE(head->ticket, p.ticket);
      }
    }
    line_leave(l.line, *head, 0, true);
  }
  EXPECT_EQ(l.line.waiting.load(), 0u);
}

TEST(BlockTest, TheLeadBoundIsTheWorstCaseWithRoomInTheMillisecond) {
  // floor((n + 1022) / 1024): a block of one needs no lead, as one value does.
  EXPECT_EQ(block_span_ms<kSeqBits>(1), 0u);
  EXPECT_EQ(block_span_ms<kSeqBits>(2), 1u);
  EXPECT_EQ(block_span_ms<kSeqBits>(1025), 1u);
  EXPECT_EQ(block_span_ms<kSeqBits>(1026), 2u);
  EXPECT_EQ(block_span_ms<kSeqBits>(2049), 2u);
  EXPECT_TRUE(block_fits_lead<kSeqBits>(1, 0));
  // The worst case is real: a block starting on the last sequence of the clock's millisecond
  // reaches exactly that far.
  for (uint64_t n : {1ull, 2ull, 1024ull, 1025ull, 1026ull, 2049ull, 102401ull}) {
    std::atomic<uint64_t> last{(uint64_t{100} << kSeqBits) + 1022};
    const BlockResult r = take_block<kSeqBits>(
        last, n, 100, 0, Limits{block_span_ms<kSeqBits>(n), kMaxTimeMs, UINT64_MAX});
    ASSERT_EQ(r.step, Step::kIssued) << n;
    EXPECT_EQ((r.value >> kSeqBits) - 100, block_span_ms<kSeqBits>(n)) << n;
  }
}

TEST(BlockTest, ABlockPastTheLayoutsEndSaysHowManyRemain) {
  std::atomic<uint64_t> last{(kMaxTimeMs << kSeqBits) + 100};  // 923 values left
  const BlockResult r =
      take_block<kSeqBits>(last, 1000, kMaxTimeMs, 0, Limits{1024, kMaxTimeMs, UINT64_MAX});
  EXPECT_EQ(r.step, Step::kExhausted);
  EXPECT_EQ(r.value, 923u);
}

// A backend's IDs increase across its blocks with a range of shards: a block from a shard
// below the backend's place starts a millisecond later.
TEST(BlockTest, ARangeBlockStartsAboveTheBackendsPlace) {
  Shard slots[4];
  std::atomic<uint64_t> floor{0};
  RangeCursor cursor;
  // The backend issued on shard 2 at millisecond 100; shard 0 is furthest behind.
  slots[2].last.store(uint64_t{100} << kSeqBits | 5);
  cursor.ms = 100;
  cursor.shard = 2;
  const RangeBlockResult r =
      take_block_in_range<kSeqBits>(slots, 4, floor, 3000, 100, lead_limits(100), cursor);
  ASSERT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(r.shard, 0u);
  EXPECT_EQ(r.block.first >> kSeqBits, 101u);  // (100, 0, ·) would sort below (100, 2, 5)
}

// A generator waits for the mark only while the lease worker's request is fresh: cut off from
// etcd, it refuses at once instead of waiting for the deadline.
TEST(IssueLoopTest, NoWaitOnARequestEtcdDoesNotAnswer) {
  LeaseSlot lease;
  lease.init();
  lease.word.store(lease_word(1, 7, 1));
  lease.state.store(static_cast<int>(LeaseState::kHeld));
  lease.deadline_mono_ns.store(INT64_MAX);
  const int64_t t = int64_t{1000} * 1000000000;
  EXPECT_TRUE(lease.worth_waiting(t));
  lease.request_sent_mono_ns.store(t);
  EXPECT_TRUE(lease.worth_waiting(t + kRequestPatienceNs));
  EXPECT_FALSE(lease.worth_waiting(t + kRequestPatienceNs + 1));
  // A store that takes longer to answer is given twice its time.
  lease.request_took_ns.store(kRequestPatienceNs);
  EXPECT_TRUE(lease.worth_waiting(t + 2 * kRequestPatienceNs));
  EXPECT_FALSE(lease.worth_waiting(t + 2 * kRequestPatienceNs + 1));
  lease.request_sent_mono_ns.store(0);  // answered
  EXPECT_TRUE(lease.worth_waiting(t + 10 * kRequestPatienceNs));
  // A write of the mark itself, slow (an fsync on etcd's side, a leader election): waited for,
  // as at every lease taken, where the first mark write is what calls wait for.
  lease.request_is_mark.store(true);
  lease.request_sent_mono_ns.store(t);
  EXPECT_TRUE(lease.worth_waiting(t + 10 * kRequestPatienceNs));
}

TEST(BlockLineTest, TheNoWaitFormNeitherWaitsInLineNorGoesBeforeIt) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  LinePlace head, quick;
  s.last.store(uint64_t{150} << kSeqBits);
  line_take_block<kSeqBits>(l.line, head, &s, 1, kSpan, floor, 100 * 1024, 100, 1000,
                            lead_limits(100));
  ASSERT_GE(head.slot, 0);
  const RangeBlockResult r = line_take_block<kSeqBits>(
      l.line, quick, &s, 1, kSpan, floor, 10, 100, 1000, lead_limits(100), RangeCursor{}, false);
  EXPECT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(r.block.value, 0u);
  EXPECT_EQ(quick.slot, -1);
  line_leave(l.line, head, 1000, false);
  const RangeBlockResult after = line_take_block<kSeqBits>(
      l.line, quick, &s, 1, kSpan, floor, 10, 100, 1000, lead_limits(100), RangeCursor{}, false);
  EXPECT_EQ(after.block.value - after.block.first + 1, 10u);
}

// The pause is the head's shards' alone: single IDs of another shard, say another database's
// snowflake.shard_id, go on; and a block of another shard does not wait behind it.
TEST(BlockLineTest, ThePauseAndTheLineAreTheBlocksShards) {
  Line l;
  Shard s5, s6;
  std::atomic<uint64_t> floor{0};
  s5.last.store(uint64_t{600} << kSeqBits);
  LinePlace head, other;
  const uint64_t n = 100 * 1024;
  line_take_block<kSeqBits>(l.line, head, &s5, 1, kSpan, floor, n, 100, 1000, lead_limits(100));
  line_take_block<kSeqBits>(l.line, head, &s5, 1, kSpan, floor, n, 100 + kBlockCapAfterMs,
                            1000 + kBlockCapAfterMs, lead_limits(100));
  ASSERT_TRUE(l.line.singles_paused(kSpan));
  EXPECT_TRUE(l.line.singles_paused(shard_span(0, 8)));   // a range holding shard 5
  EXPECT_FALSE(l.line.singles_paused(shard_span(6, 1)));  // another shard
  const RangeBlockResult r =
      line_take_block<kSeqBits>(l.line, other, &s6, 1, shard_span(6, 1), floor, 10,
                                100 + kBlockCapAfterMs, 1000 + kBlockCapAfterMs, lead_limits(100));
  EXPECT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(other.slot, -1);
}

// A head cancelled (an ERROR, statement_timeout) leaves the line with whatever clock its
// caller has, none at all on the way out: the cool-down after its pause still counts from
// its latest try, not from 1970, so the next head may not pause single IDs again at once.
TEST(BlockLineTest, ACancelledHeadKeepsTheCoolDownOfItsPause) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  s.last.store(uint64_t{600} << kSeqBits);  // the stream well ahead: large blocks wait
  LinePlace a, b;
  const uint64_t n = 100 * 1024 - 1022;
  line_take_block<kSeqBits>(l.line, a, &s, 1, kSpan, floor, n, 100, 1000, lead_limits(100));
  line_take_block<kSeqBits>(l.line, b, &s, 1, kSpan, floor, n, 100, 1000, lead_limits(100));
  ASSERT_GE(a.slot, 0);
  ASSERT_GE(b.slot, 0);
  line_take_block<kSeqBits>(l.line, a, &s, 1, kSpan, floor, n, 100, 1100, lead_limits(100));
  ASSERT_TRUE(l.line.singles_paused(kSpan));  // paused from 1100
  line_take_block<kSeqBits>(l.line, a, &s, 1, kSpan, floor, n, 100, 1500, lead_limits(100));
  line_leave(l.line, a, 0, false);  // cancelled at 1500 with no clock: the pause lasted 400 ms
  EXPECT_FALSE(l.line.singles_paused(kSpan));
  // b is head from 1600: kBlockCapAfterMs later it would pause, but the cool-down (400 ms from
  // 1500) holds it to 1900.
  for (uint64_t now : {1600, 1700, 1899}) {
    line_take_block<kSeqBits>(l.line, b, &s, 1, kSpan, floor, n, 100, now, lead_limits(100));
    EXPECT_FALSE(l.line.singles_paused(kSpan)) << now;
  }
  line_take_block<kSeqBits>(l.line, b, &s, 1, kSpan, floor, n, 100, 1900, lead_limits(100));
  EXPECT_TRUE(l.line.singles_paused(kSpan));
  line_leave(l.line, b, 1900, false);
}

// Heads of two shards pause single IDs of their own shards at once, and neither waits out the
// other's pause or cool-down (two roles, each with its snowflake.shard_id).
TEST(BlockLineTest, HeadsOfTwoShardsPauseAtOnce) {
  Line l;
  Shard s3, s5;
  std::atomic<uint64_t> floor{0};
  const uint64_t span3 = shard_span(3, 1), span5 = shard_span(5, 1);
  s3.last.store(uint64_t{600} << kSeqBits);
  s5.last.store(uint64_t{600} << kSeqBits);
  LinePlace h3, h5;
  const uint64_t n = 100 * 1024 - 1022;
  line_take_block<kSeqBits>(l.line, h3, &s3, 1, span3, floor, n, 100, 1000, lead_limits(100));
  line_take_block<kSeqBits>(l.line, h5, &s5, 1, span5, floor, n, 100, 1000, lead_limits(100));
  line_take_block<kSeqBits>(l.line, h3, &s3, 1, span3, floor, n, 100, 1100, lead_limits(100));
  line_take_block<kSeqBits>(l.line, h5, &s5, 1, span5, floor, n, 100, 1100, lead_limits(100));
  EXPECT_TRUE(l.line.singles_paused(span3));
  EXPECT_TRUE(l.line.singles_paused(span5));
  EXPECT_FALSE(l.line.singles_paused(shard_span(4, 1)));
  // Shard 3's head leaves after a long pause: its cool-down is shard 3's alone.
  line_leave(l.line, h3, 1600, true);
  EXPECT_FALSE(l.line.singles_paused(span3));
  EXPECT_TRUE(l.line.singles_paused(span5));
  line_leave(l.line, h5, 1200, true);
  EXPECT_EQ(l.line.cooled_at(span3), 1600u + 500);
  EXPECT_EQ(l.line.cooled_at(span5), 1200u + 100);
  // A new head of shard 5 pauses kBlockCapAfterMs after it became head, as the cool-down of
  // its own shard allows, though shard 3's still runs.
  LinePlace next5;
  line_take_block<kSeqBits>(l.line, next5, &s5, 1, span5, floor, n, 100, 1300, lead_limits(100));
  ASSERT_GE(next5.slot, 0);
  line_take_block<kSeqBits>(l.line, next5, &s5, 1, span5, floor, n, 100, 1400, lead_limits(100));
  EXPECT_TRUE(l.line.singles_paused(span5));
  EXPECT_FALSE(l.line.singles_paused(span3));
  line_leave(l.line, next5, 1400, false);
}

// The bound of the line holds for each shard while blocks of two shards loop beside single IDs
// at both shards' capacity: no block waits longer than 2 x (max_lead + 100 ms) + 100 ms.
TEST(BlockLineTest, BlocksOfTwoShardsEachKeepTheBoundBesideSinglesAtCapacity) {
  Line l;
  Shard s[2];
  std::atomic<uint64_t> floor[2];
  const uint64_t spans[2] = {shard_span(3, 1), shard_span(5, 1)};
  const uint64_t max_lead = 1024, start = 5000;
  const uint64_t n = 101 * 1024 - 1023;  // the largest block of a 100 ms bound
  LinePlace p[2];
  uint64_t asked[2] = {start, start}, longest = 0;
  int taken[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    floor[k].store(0);
    s[k].last.store((start + max_lead) << kSeqBits);  // singles already at their lead bound
  }
  for (uint64_t now = start; now < start + 10000; ++now) {
    for (int k = 0; k < 2; ++k) {
      // Singles, flat out: 2,048 tries a millisecond (twice the capacity), unless paused.
      for (int i = 0; i < 2048 && !l.line.singles_paused(spans[k]); ++i)
        next_state<kSeqBits>(s[k].last, now, lead_limits(max_lead));
      if (asked[k] > now) continue;
      const RangeBlockResult r = line_take_block<kSeqBits>(l.line, p[k], &s[k], 1, spans[k],
                                                           floor[k], n, now, now, lead_limits(100));
      if (r.block.step == Step::kIssued) {
        longest = std::max(longest, now - asked[k]);
        line_leave(l.line, p[k], now, true);
        asked[k] = now + 1;  // the next block, asked at once
        ++taken[k];
      }
    }
  }
  EXPECT_GE(taken[0], 3);
  EXPECT_GE(taken[1], 3);
  EXPECT_LE(longest, 2 * (max_lead + 100) + 100);
}

// A slot being taken (its ticket not yet written) holds every later ticket back: two heads
// never take at once.
TEST(BlockLineTest, ASlotBeingTakenIsEarlierThanEveryTicket) {
  Line l;
  LinePlace p;
  ASSERT_TRUE(line_join(l.line, p, kSpan, 0));
  EXPECT_TRUE(line_head(l.line, p.ticket, kSpan));
  l.line.tickets[kBlockLineSlots - 1].store(kLineClaiming);
  EXPECT_FALSE(line_head(l.line, p.ticket, kSpan));
  EXPECT_FALSE(line_head(l.line, p.ticket, shard_span(6, 1)));
}

// A head that may not pause yet is told to come back when it may, not after the clock's whole
// wait (up to max_lead): the bound holds.
TEST(BlockLineTest, AHeadComesBackWhenItMayPause) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  s.last.store(uint64_t{1124} << kSeqBits);  // 1,024 ms ahead of the clock at 100
  LinePlace p;
  const RangeBlockResult r = line_take_block<kSeqBits>(l.line, p, &s, 1, kSpan, floor, 100 * 1024,
                                                       100, 1000, lead_limits(100));
  ASSERT_EQ(r.block.step, Step::kWait);
  EXPECT_EQ(r.block.value, kBlockCapAfterMs);
}

// Two sessions looping the largest blocks, and single IDs flat out: the blocks are served, and
// single IDs keep about half the time at least (a pause is followed by as long with none),
// where with a fixed 100 ms cool-down they kept 34 %, and with none under a tenth.
TEST(BlockLineTest, LoopingBlocksLeaveSinglesHalfTheTime) {
  Line l;
  Shard s;
  std::atomic<uint64_t> floor{0};
  const uint64_t n = 101 * 1024 - 1023, start = 10000, length = 10000;
  LinePlace a, b;
  uint64_t next_try_a = start, next_try_b = start, served = 0, unpaused_ms = 0;
  for (uint64_t now = start; now < start + length; ++now) {
    for (auto [place, next_try] : {std::pair<LinePlace *, uint64_t *>{&a, &next_try_a},
                                   std::pair<LinePlace *, uint64_t *>{&b, &next_try_b}}) {
      if (now < *next_try) continue;
      const RangeBlockResult r = line_take_block<kSeqBits>(l.line, *place, &s, 1, kSpan, floor, n,
                                                           now, now, lead_limits(100));
      if (r.block.step == Step::kIssued) {
        line_leave(l.line, *place, now, true);
        ++served;
        *next_try = now;  // loops at once
      } else {
        *next_try = now + std::max<uint64_t>(r.block.value, 1);
      }
    }
    if (!l.line.singles_paused(kSpan)) {
      ++unpaused_ms;
      for (int i = 0; i < 2048; ++i) next_state<kSeqBits>(s.last, now, lead_limits(1024));
    }
  }
  EXPECT_GE(served, 8u);  // about one a second: each pause waits for the last one's cool-down
  EXPECT_GE(unpaused_ms, length * 45 / 100) << served << " blocks";
}

// The lease's word is read before the clock: a lease that changes while the clock is read is
// seen by the check after issuing, and the value dropped.
TEST(IssueLoopTest, TheLeaseWordIsReadBeforeTheClock) {
  FakeEnv env;
  LeaseSlot lease;
  lease.init();
  open_lease(lease, 1, 7, UINT64_MAX);
  env.leased = &lease;
  int reads = 0;
  env.on_read = [&] {
    if (++reads == 1) lease.word.store(lease_word(2, 7, 1));
  };
  ShardKind kind;
  const IssueStep r = issue_loop(env, kind);
  EXPECT_EQ(r.step, Step::kIssued);
  // The first try ran on the word read before the change, and its value was dropped.
  EXPECT_EQ(kind.words_seen, (std::vector<uint64_t>{lease_word(1, 7, 1), lease_word(2, 7, 1)}));
  EXPECT_EQ(r.value & kMaxSeq, 1u);
}
