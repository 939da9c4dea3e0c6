// Unit tests of blocks (generator.hpp's take_block, take_block_in_range and next_in_block):
// n values of a stream in one compare-and-swap, with a fake clock.
#include "core/generator.hpp"
#include "core/layout.hpp"
#include "core/shared_state.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

using namespace snowflake;
using SharedState = SharedStateT<SpinLock>;

namespace {

struct Stream {
  std::atomic<uint64_t> last{0};
  uint64_t lead_ms = 1024;  // snowflake.max_lead's default
  uint64_t reserved_ms = UINT64_MAX;
  uint64_t max_ms = kMaxTimeMs;
  Limits limits() const { return Limits{lead_ms, max_ms, reserved_ms}; }
  BlockResult block(uint64_t n, uint64_t now_ms) {
    return take_block<kSeqBits>(last, n, now_ms, 0, limits());
  }
  NextResult one(uint64_t now_ms) { return next_state<kSeqBits>(last, now_ms, limits()); }
};

// Every ID of a block, by the client's rule.
std::vector<uint64_t> expand(uint64_t first_id, uint64_t last_id) {
  std::vector<uint64_t> ids;
  for (uint64_t id = first_id;; id = next_in_block<kShardBits, kSeqBits>(id)) {
    ids.push_back(id);
    if (id == last_id) break;
  }
  return ids;
}

uint64_t id_of(uint64_t state, uint32_t shard) {
  return pack(state >> kSeqBits, shard, static_cast<uint32_t>(state & kMaxSeq));
}

}  // namespace

TEST(BlockTest, SizesFromOneToAMillion) {
  EXPECT_FALSE(block_size_ok(0));
  EXPECT_FALSE(block_size_ok(-1));
  EXPECT_TRUE(block_size_ok(1));
  EXPECT_TRUE(block_size_ok(1048576));
  EXPECT_FALSE(block_size_ok(1048577));
  EXPECT_FALSE(block_size_ok(INT64_MAX));
}

TEST(BlockTest, StartsAtTheClockAndCarriesIntoTheNextMilliseconds) {
  Stream s;
  const BlockResult one = s.block(1, 100);
  ASSERT_EQ(one.step, Step::kIssued);
  EXPECT_EQ(one.first, uint64_t{100} << kSeqBits);
  EXPECT_EQ(one.value, one.first);
  const BlockResult b = s.block(3000, 100);
  ASSERT_EQ(b.step, Step::kIssued);
  EXPECT_EQ(b.first, (uint64_t{100} << kSeqBits) | 1);
  EXPECT_EQ(b.value, (uint64_t{102} << kSeqBits) | (3000 - 2 * 1024));
  EXPECT_EQ(s.last.load(), b.value);
  // A later millisecond starts at sequence 0.
  const BlockResult later = s.block(5, 500);
  ASSERT_EQ(later.step, Step::kIssued);
  EXPECT_EQ(later.first, uint64_t{500} << kSeqBits);
}

TEST(BlockTest, ValuesAroundABlockNeverFallInsideIt) {
  Stream s;
  const NextResult before = s.one(100);
  const BlockResult b = s.block(2500, 100);
  const NextResult after = s.one(100);
  ASSERT_EQ(b.step, Step::kIssued);
  EXPECT_EQ(b.first, before.value + 1);
  EXPECT_EQ(after.value, b.value + 1);
}

TEST(BlockTest, TheClientsRuleGivesEveryValueOfTheBlockInOrder) {
  Stream s;
  s.one(100);
  const uint32_t shard = 8191;
  for (uint64_t n : {uint64_t{1}, uint64_t{1023}, uint64_t{1024}, uint64_t{1025}, uint64_t{4097},
                     kMaxBlockValues}) {
    const BlockResult b = s.block(n, 100 + n);
    ASSERT_EQ(b.step, Step::kIssued) << n;
    const std::vector<uint64_t> ids = expand(id_of(b.first, shard), id_of(b.value, shard));
    ASSERT_EQ(ids.size(), n);
    uint64_t state = b.first;
    for (uint64_t id : ids) {
      ASSERT_EQ(id, id_of(state, shard));
      ++state;
    }
  }
  // The last sequence of a millisecond goes on to sequence 0 of the next, on the same shard.
  EXPECT_EQ((next_in_block<kShardBits, kSeqBits>(pack(7, 3, kMaxSeq))), pack(8, 3, 0));
}

TEST(BlockTest, TheLargestBlockFitsAtTheDefaultLeadAndTheNextWaits) {
  Stream s;
  const BlockResult b = s.block(kMaxBlockValues, 100);
  ASSERT_EQ(b.step, Step::kIssued);
  EXPECT_EQ(b.value >> kSeqBits, 100u + 1023);
  // The stream is 1,023 ms ahead: another large block would reach past 1,024 ms ahead.
  const BlockResult again = s.block(kMaxBlockValues, 100);
  ASSERT_EQ(again.step, Step::kWait);
  EXPECT_EQ(again.value, 1023u);      // it would end at 2147: within 1,024 ms from 1123 on
  EXPECT_EQ(s.last.load(), b.value);  // nothing consumed
  EXPECT_EQ(s.block(kMaxBlockValues, 100 + 1023).step, Step::kIssued);
}

TEST(BlockTest, ABlockFitsTheLeadBoundWhenItsSpanDoes) {
  EXPECT_EQ(block_span_ms<kSeqBits>(1), 0u);
  EXPECT_EQ(block_span_ms<kSeqBits>(1024), 1u);
  EXPECT_EQ(block_span_ms<kSeqBits>(1025), 1u);
  EXPECT_EQ(block_span_ms<kSeqBits>(1026), 2u);
  EXPECT_EQ(block_span_ms<kSeqBits>(kMaxBlockValues), 1024u);
  EXPECT_TRUE(block_fits_lead<kSeqBits>(1, 0));
  EXPECT_TRUE(block_fits_lead<kSeqBits>(kMaxBlockValues, 1024));  // the default
  EXPECT_FALSE(block_fits_lead<kSeqBits>(kMaxBlockValues, 1023));
  EXPECT_TRUE(block_fits_lead<kSeqBits>(100 * 1024, 100));
  EXPECT_TRUE(block_fits_lead<kSeqBits>(100 * 1024 + 1, 100));
  EXPECT_FALSE(block_fits_lead<kSeqBits>(101 * 1024 - 1022, 100));
  // A block that fits is taken, from any place in the clock's millisecond, within the lead.
  for (uint64_t used : {0u, 1u, 1023u}) {
    Stream s;
    s.lead_ms = 100;
    s.last.store((uint64_t{500} << kSeqBits) + used);
    const BlockResult b = s.block(100 * 1024, 500);
    ASSERT_EQ(b.step, Step::kIssued) << used;
    EXPECT_LE(b.value >> kSeqBits, 500u + 100) << used;
  }
  Stream s;
  s.lead_ms = 5000;
  int taken = 0;
  while (s.block(kMaxBlockValues, 100).step == Step::kIssued) ++taken;
  EXPECT_EQ(taken, 4);  // 4 blocks reach 100 + 4095; a fifth would end at 5119 past 5100
  const BlockResult w = s.block(1024, 100);
  ASSERT_EQ(w.step, Step::kIssued);  // 100 + 4096 is within 5000 ms
  EXPECT_EQ(w.value >> kSeqBits, 100u + 4096);
}

// snowflake.max_lead is the operator's bound on how far the stream runs ahead of the clock,
// and every snowflake() of the shard waits past it: a block never takes the stream further.
TEST(BlockTest, NoBlockTakesTheStreamPastMaxLead) {
  Stream s;
  s.lead_ms = 100;
  const BlockResult big = s.block(kMaxBlockValues, 500);  // would end 1,023 ms ahead
  EXPECT_NE(big.step, Step::kIssued);
  EXPECT_EQ(s.last.load(), 0u);  // nothing consumed
  const BlockResult fits = s.block(100 * 1024, 500);
  ASSERT_EQ(fits.step, Step::kIssued);
  EXPECT_LE(fits.value >> kSeqBits, 500u + 100);
}

TEST(BlockTest, TheReservationMustCoverTheLastValueNotJustTheFirst) {
  Stream s;
  s.reserved_ms = 110;
  const BlockResult r = s.block(20 * 1024, 100);
  ASSERT_EQ(r.step, Step::kReserve);
  EXPECT_EQ(r.value, 119u);  // the last value's millisecond
  EXPECT_EQ(s.last.load(), 0u);
  s.reserved_ms = 120;
  EXPECT_EQ(s.block(20 * 1024, 100).step, Step::kIssued);
}

TEST(BlockTest, ABlockPastTheLayoutsEndIsExhausted) {
  Stream s;
  const BlockResult r = s.block(2048, kMaxTimeMs);
  EXPECT_EQ(r.step, Step::kExhausted);
  EXPECT_EQ(s.last.load(), 0u);
  EXPECT_EQ(s.block(1024, kMaxTimeMs).step, Step::kIssued);
}

TEST(BlockTest, ARangeTakesTheBlockFromItsShardFurthestBehindAndAboveItsFloor) {
  auto state = std::make_unique<SharedState>();
  state->init();
  ShardSlot *slots = &state->shards[10];
  const Limits limits{1000, kMaxTimeMs, UINT64_MAX};
  // Shard 0 and 1 of the range at 100, shard 2 and 3 untouched: shard 2 is furthest behind.
  slots[0].last.store(uint64_t{100} << kSeqBits);
  slots[1].last.store(uint64_t{100} << kSeqBits);
  RangeBlockResult r =
      take_block_in_range<kSeqBits>(slots, 4, slots[0].range_floor_ms, 10, 100, limits);
  ASSERT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(r.shard, 2u);
  EXPECT_EQ(r.block.first, uint64_t{100} << kSeqBits);
  // Now shard 3; then the range's floor keeps a block above it.
  r = take_block_in_range<kSeqBits>(slots, 4, slots[0].range_floor_ms, 10, 100, limits);
  EXPECT_EQ(r.shard, 3u);
  slots[0].range_floor_ms.store(150);
  r = take_block_in_range<kSeqBits>(slots, 4, slots[0].range_floor_ms, 10, 100, limits);
  ASSERT_EQ(r.block.step, Step::kIssued);
  EXPECT_EQ(r.shard, 0u);
  EXPECT_EQ(r.block.first, uint64_t{150} << kSeqBits);
}

TEST(BlockTest, ThreadsTakingBlocksBesideSingleValuesNeverCollide) {
  Stream s;
  std::atomic<uint64_t> now{1000};
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [first, last] of every block and value
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::pair<uint64_t, uint64_t>> mine;
      for (int i = 0; i < 4000; ++i) {
        const uint64_t clock = now.load();
        if ((t + i) % 3 == 0) {
          const BlockResult b = take_block<kSeqBits>(s.last, 1 + (i * 37) % 3000, clock, 0,
                                                     Limits{1000, kMaxTimeMs, UINT64_MAX});
          if (b.step == Step::kIssued) mine.emplace_back(b.first, b.value);
        } else {
          const NextResult r = s.one(clock);
          if (r.step == Step::kIssued) mine.emplace_back(r.value, r.value);
        }
        if (i % 50 == 0) now.fetch_add(1);
      }
      std::lock_guard<std::mutex> g(mu);
      spans.insert(spans.end(), mine.begin(), mine.end());
    });
  for (std::thread &th : threads) th.join();
  std::sort(spans.begin(), spans.end());
  ASSERT_GT(spans.size(), 1000u);
  for (size_t i = 1; i < spans.size(); ++i)
    ASSERT_GT(spans[i].first, spans[i - 1].second) << "overlap at " << i;
}

// A range of shards: blocks from the shard furthest behind, taken while other threads call
// next_in_range with their own cursors, never share a value with them or with each other,
// and each thread's single values still strictly increase in ID order.
TEST(BlockTest, RangeBlocksBesideRangeValuesNeverCollide) {
  auto state = std::make_unique<SharedState>();
  state->init();
  constexpr uint32_t kCount = 4;
  ShardSlot *slots = &state->shards[20];
  std::atomic<uint64_t> now{1000};
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> spans[kCount];  // per shard: [first, last]
  bool ordered = true;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::pair<uint64_t, uint64_t>> mine[kCount];
      RangeCursor cursor;
      uint64_t last_id = 0;
      bool increasing = true;
      const Limits limits{1024, kMaxTimeMs, UINT64_MAX};
      for (int i = 0; i < 4000; ++i) {
        const uint64_t clock = now.load();
        if ((t + i) % 3 == 0) {
          const RangeBlockResult r = take_block_in_range<kSeqBits>(
              slots, kCount, slots[0].range_floor_ms, 1 + (i * 37) % 3000, clock, limits);
          if (r.block.step == Step::kIssued)
            mine[r.shard].emplace_back(r.block.first, r.block.value);
        } else {
          const RangeResult r = next_in_range<kSeqBits>(slots, kCount, slots[0].range_floor_ms,
                                                        cursor, clock, limits);
          if (r.step == Step::kIssued) {
            mine[r.shard].emplace_back(r.value, r.value);
            const uint64_t id = id_of(r.value, r.shard);
            increasing = increasing && id > last_id;
            last_id = id;
          }
        }
        if (i % 50 == 0) now.fetch_add(1);
      }
      std::lock_guard<std::mutex> g(mu);
      ordered = ordered && increasing;
      for (uint32_t s = 0; s < kCount; ++s)
        spans[s].insert(spans[s].end(), mine[s].begin(), mine[s].end());
    });
  for (std::thread &th : threads) th.join();
  EXPECT_TRUE(ordered);
  size_t total = 0;
  for (uint32_t s = 0; s < kCount; ++s) {
    std::sort(spans[s].begin(), spans[s].end());
    total += spans[s].size();
    for (size_t i = 1; i < spans[s].size(); ++i)
      ASSERT_GT(spans[s][i].first, spans[s][i - 1].second) << "shard " << s << ", overlap at " << i;
  }
  EXPECT_GT(total, 10000u);
}

// Up to 1,024 IDs, a block is n consecutive integers (last = first + n - 1), wherever the
// stream stands in its millisecond: one the rest of the millisecond cannot hold starts at the
// next one.
TEST(BlockTest, EveryBlockUpToAMillisecondIsConsecutive) {
  for (uint64_t n = 1; n <= 1024; ++n) {
    for (uint64_t seq :
         {uint64_t{0}, uint64_t{1}, 1024 - n, 1024 - n + 1, uint64_t{1022}, uint64_t{1023}}) {
      if (seq > 1023) continue;
      Stream s;
      s.last.store((uint64_t{100} << kSeqBits) | seq);
      const BlockResult b = s.block(n, 100);
      ASSERT_EQ(b.step, Step::kIssued) << n << " at " << seq;
      const uint64_t first = id_of(b.first, 7), last = id_of(b.value, 7);
      ASSERT_EQ(last, first + n - 1) << n << " at " << seq;
      ASSERT_GT(b.first, (uint64_t{100} << kSeqBits) | seq);  // after what was issued
      // It starts in the same millisecond when that holds it, else at the next one's start.
      const bool fits = seq + 1 + n <= 1024;
      EXPECT_EQ(b.first, fits ? (uint64_t{100} << kSeqBits | (seq + 1)) : uint64_t{101} << kSeqBits)
          << n << " at " << seq;
    }
  }
}

TEST(BlockTest, TheNoWaitFormTakesWhatTheStreamHoldsNow) {
  Stream s;
  s.lead_ms = 2;
  // An empty stream at the clock: 1,000 fit in the clock's millisecond.
  BlockResult b = take_block_now<kSeqBits>(s.last, 1000, 100, 0, s.limits());
  ASSERT_EQ(b.step, Step::kIssued);
  EXPECT_EQ(b.value - b.first + 1, 1000u);
  // 1,000 more: consecutive, so only the 24 left of the millisecond.
  b = take_block_now<kSeqBits>(s.last, 1000, 100, 0, s.limits());
  EXPECT_EQ(b.value - b.first + 1, 24u);
  EXPECT_EQ(b.value & kMaxSeq, 1023u);
  // 5,000: the two milliseconds the lead allows, 2,048, and no more.
  b = take_block_now<kSeqBits>(s.last, 5000, 100, 0, s.limits());
  EXPECT_EQ(b.value - b.first + 1, 2048u);
  EXPECT_EQ(b.value >> kSeqBits, 102u);
  // At the lead bound: nothing, at once, and nothing consumed.
  const uint64_t before = s.last.load();
  b = take_block_now<kSeqBits>(s.last, 1, 100, 0, s.limits());
  EXPECT_EQ(b.value, 0u);
  EXPECT_EQ(s.last.load(), before);
  // The reservation bounds it too: below millisecond 104, with the clock at 103.
  s.reserved_ms = 104;
  b = take_block_now<kSeqBits>(s.last, 5000, 103, 0, s.limits());
  EXPECT_EQ(b.value - b.first + 1, 1024u);
  EXPECT_EQ(b.value >> kSeqBits, 103u);
  EXPECT_EQ(take_block_now<kSeqBits>(s.last, 1, 103, 0, s.limits()).value, 0u);
}
