// Unit tests of a range of shards issuing as one stream (generator.hpp's next_in_range,
// snowflake.shard_count), with a fake clock.
#include "core/generator.hpp"
#include "core/layout.hpp"
#include "core/shared_state.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

using namespace snowflake;
using SharedState = SharedStateT<SpinLock>;

namespace {

// One backend's view of a range of count shards starting at first.
struct RangeBackend {
  ShardSlot *slots;
  uint32_t first;
  uint32_t count;
  RangeCursor cursor;

  RangeBackend(ShardSlot *s, uint32_t f, uint32_t c) : slots(s), first(f), count(c) {}

  RangeResult next(uint64_t now_ms, uint64_t lead_ms = 1000, uint64_t reserved_ms = UINT64_MAX) {
    return next_in_range<kSeqBits>(slots + first, count, slots[first].range_floor_ms, cursor,
                                   now_ms, Limits{lead_ms, kMaxTimeMs, reserved_ms});
  }
  // The ID of an issued result.
  uint64_t id(const RangeResult &r) const {
    return pack(r.value >> kSeqBits, first + r.shard, r.value & kMaxSeq);
  }
};

std::unique_ptr<SharedState> fresh_state() {
  auto state = std::make_unique<SharedState>();
  state->init();
  return state;
}

}  // namespace

TEST(RangeTest, FillsTheLowestShardFirstThenMovesUpThenTakesTheNextMillisecond) {
  auto state = fresh_state();
  RangeBackend b(state->shards, 100, 4);
  for (uint32_t shard = 0; shard < 4; ++shard)
    for (uint32_t seq = 0; seq <= kMaxSeq; ++seq) {
      const RangeResult r = b.next(5000);
      ASSERT_EQ(r.step, Step::kIssued);
      ASSERT_EQ(r.shard, shard);
      ASSERT_EQ(r.value, (uint64_t{5000} << kSeqBits) | seq);
    }
  // Every shard is full at 5000: the range's floor moves to 5001, from the first shard.
  const RangeResult next = b.next(5000);
  ASSERT_EQ(next.step, Step::kIssued);
  EXPECT_EQ(next.shard, 0u);
  EXPECT_EQ(next.value, uint64_t{5001} << kSeqBits);
  EXPECT_EQ(state->shards[100].range_floor_ms.load(), 5001u);
  EXPECT_EQ(state->shards[104].last.load(), 0u);  // outside the range: untouched
}

TEST(RangeTest, TheRangeHoldsCountTimesAShardsIdsPerMillisecond) {
  // With no lead allowed, a range of 8 issues 8 * 1,024 IDs in a millisecond, then waits.
  auto state = fresh_state();
  RangeBackend b(state->shards, 0, 8);
  int issued = 0;
  RangeResult r;
  while ((r = b.next(7000, 0)).step == Step::kIssued) ++issued;
  EXPECT_EQ(issued, 8 * 1024);
  EXPECT_EQ(r.step, Step::kWait);
  EXPECT_EQ(r.value, 1u);
  // The clock moves on: the next millisecond starts on the first shard.
  r = b.next(7001, 0);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.shard, 0u);
  EXPECT_EQ(r.value, uint64_t{7001} << kSeqBits);
}

TEST(RangeTest, TheLeadIsBoundAsForOneShard) {
  auto state = fresh_state();
  RangeBackend b(state->shards, 0, 2);
  int issued = 0;
  RangeResult r;
  while ((r = b.next(7000, 3)).step == Step::kIssued) ++issued;
  EXPECT_EQ(issued, 4 * 2 * 1024);  // milliseconds 7000 to 7003, on 2 shards
  EXPECT_EQ(r.step, Step::kWait);
  EXPECT_EQ(r.value, 1u);
}

TEST(RangeTest, NothingIsIssuedAtOrPastTheReservation) {
  auto state = fresh_state();
  RangeBackend b(state->shards, 0, 2);
  for (int i = 0; i < 2048; ++i) ASSERT_EQ(b.next(7000, 1000, 7001).step, Step::kIssued);
  const RangeResult r = b.next(7000, 1000, 7001);
  EXPECT_EQ(r.step, Step::kReserve);
  EXPECT_EQ(r.value, 7001u);
  EXPECT_EQ(b.next(7000, 1000, 7002).step, Step::kIssued);  // extended: goes on
}

TEST(RangeTest, AShardRunAheadAloneIsFoundFullAndTheRangeGoesOn) {
  // snowflake(shard) on the range's first shard ran it 5 ms ahead; the range fills the
  // others at the clock's millisecond, and never takes that shard past it.
  auto state = fresh_state();
  state->shards[0].last.store((uint64_t{7005} << kSeqBits) | 3);
  RangeBackend b(state->shards, 0, 2);
  const RangeResult r = b.next(7000);
  ASSERT_EQ(r.step, Step::kIssued);
  EXPECT_EQ(r.shard, 1u);
  EXPECT_EQ(r.value, uint64_t{7000} << kSeqBits);
  EXPECT_EQ(state->shards[0].last.load(), (uint64_t{7005} << kSeqBits) | 3);
}

TEST(RangeTest, OneBackendsIdsStrictlyIncreaseEvenWhenItsClockReadsLess) {
  // A backend's clock reading can trail its last one by microseconds (an extrapolated
  // counter), a millisecond at a boundary: its next ID is still above its last.
  auto state = fresh_state();
  RangeBackend b(state->shards, 0, 4);
  const RangeResult first = b.next(7001);
  const RangeResult second = b.next(7000);
  ASSERT_EQ(second.step, Step::kIssued);
  EXPECT_GT(b.id(second), b.id(first));
}

TEST(RangeTest, ThreadsSharingARangeNeverCollideAndEachOnesIdsIncrease) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200000;
  auto state = fresh_state();
  std::atomic<uint64_t> clock{1000};
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      RangeBackend b(state->shards, 40, 4);
      got[t].reserve(kPerThread);
      while (got[t].size() < kPerThread) {
        const RangeResult r = b.next(clock.load(), 2);
        if (r.step == Step::kIssued) {
          got[t].push_back(b.id(r));
        } else {
          uint64_t now = clock.load();  // the fake clock catches up
          clock.compare_exchange_strong(now, now + r.value);
        }
      }
    });
  for (auto &th : threads) th.join();
  std::set<uint64_t> all;
  for (auto &v : got) {
    for (size_t i = 1; i < v.size(); ++i) ASSERT_LT(v[i - 1], v[i]);
    for (uint64_t id : v) {
      const uint32_t shard = unpack(id).shard;
      ASSERT_GE(shard, 40u);
      ASSERT_LE(shard, 43u);
    }
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads} * kPerThread);
}
