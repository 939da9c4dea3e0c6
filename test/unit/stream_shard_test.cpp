// Unit tests of the per-shard streams (stream_shard.hpp) that sno(), rsxid() and ksuid() share,
// on a fake clock: sessions of different shards do not slow each other (the old single stream
// ended its unit at every change of shard, and two shards alternating waited for the clock at
// every other value); each shard's values strictly increase in issue order, across threads,
// when a slot changes hands, and with more shards than slots; a value taken while its slot
// changes hands is dropped; every shard's stream starts from the kind's floor and counts for
// the reservation left at exit and a lease's final mark.
#include "core/second_stream.hpp"
#include "core/shared_state.hpp"
#include "core/sno_stream.hpp"
#include "core/stream_shard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

using namespace snowflake;
using seconds::kCounterBits;
using seconds::kKsuid;
using seconds::kMaxCounter;
using seconds::kXid;

namespace {

// 2026-01-01 00:00:00 UTC, a second's (and a 4 ms unit's) first millisecond.
constexpr uint64_t kT = 1767225600000;
constexpr uint64_t kTs = kT / 1000;
constexpr uint64_t kTUnit = (kT - static_cast<uint64_t>(sno::kEpochUnixMs)) / 4;

uint64_t word(uint64_t second, uint64_t counter) { return second << kCounterBits | counter; }

using SecondStreams = seconds::StreamsT<SpinLock>;
using SnoStreams = ShardStreamsT<SpinLock>;

// rsxid()'s step for shard at the clock now (lead 1,024 ms, no reservation limit).
NextResult xid_next(SecondStreams &k, uint32_t shard, uint64_t now, uint64_t limit = UINT64_MAX) {
  return issue_for_shard(k.shards, shard, [&](std::atomic<uint64_t> &last) {
    return seconds::next(last, k.floor_unix_ms, now, 1024, limit, kXid);
  });
}

NextResult sno_next(SnoStreams &k, uint32_t shard, uint64_t now) {
  return issue_for_shard(k, shard, [&](std::atomic<uint64_t> &last) {
    return sno::next(last, now, 1024, UINT64_MAX);
  });
}

std::vector<uint8_t> xid_bytes(uint64_t w, uint32_t shard) {
  std::vector<uint8_t> b(seconds::kXidBytes);
  seconds::compose_xid(w, shard, 77, b.data());
  return b;
}

std::vector<uint8_t> sno_bytes(uint64_t w, uint32_t shard) {
  std::vector<uint8_t> b(sno::kBytes);
  sno::compose_issued(w, 0, static_cast<uint16_t>(shard), b.data());
  return b;
}

}  // namespace

// Two roles on two shards calling rsxid() flat out, value by value, the clock standing still:
// every value is issued at once, in the clock's second, each shard counting on in its own
// stream. (With one stream for the server, each change of shard ended the second: two values,
// then a wait for the clock at snowflake.max_lead.)
TEST(StreamShard, TwoShardsAlternatingIssueAtFullPaceInTheirOwnStreams) {
  auto k = std::make_unique<SecondStreams>();
  k->init();
  std::map<uint32_t, std::vector<uint8_t>> prev;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t shard = i % 2 == 0 ? 5 : 6;
    const NextResult r = xid_next(*k, shard, kT + 10);
    ASSERT_EQ(r.step, Step::kIssued) << "value " << i;
    EXPECT_EQ(r.value, word(kTs, static_cast<uint64_t>(i / 2)));
    const std::vector<uint8_t> b = xid_bytes(r.value, shard);
    if (prev.count(shard)) {
      ASSERT_GT(b, prev[shard]) << "value " << i;
    }
    prev[shard] = b;
  }
  // The same for a KSUID's layout: the same mechanism, the kind's own origin.
  auto q = std::make_unique<SecondStreams>();
  q->init();
  for (int i = 0; i < 1000; ++i) {
    const NextResult r = issue_for_shard(q->shards, i % 2 == 0 ? 1u : 2u, [&](auto &last) {
      return seconds::next(last, q->floor_unix_ms, kT + 10, 1024, UINT64_MAX, kKsuid);
    });
    ASSERT_EQ(r.step, Step::kIssued);
    EXPECT_EQ(r.value, word(kTs - kKsuid.origin_unix_s, static_cast<uint64_t>(i / 2)));
  }
  // sno(): 4 ms units, 65,536 snos each, per partition.
  auto s = std::make_unique<SnoStreams>();
  s->init();
  for (int i = 0; i < 100000; ++i) {
    const NextResult r = sno_next(*s, i % 2 == 0 ? 9 : 3, kT);
    ASSERT_EQ(r.step, Step::kIssued) << "sno " << i;
    EXPECT_EQ(r.value, kTUnit << sno::kSeqBits | static_cast<uint64_t>(i / 2));
  }
}

// One session of another shard, now and then, changes nothing for the first shard's stream.
TEST(StreamShard, AnotherShardsOccasionalValueDoesNotEndTheUnit) {
  auto k = std::make_unique<SecondStreams>();
  k->init();
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(xid_next(*k, 0, kT + 100).value, word(kTs, static_cast<uint64_t>(i)));
    if (i % 100 == 0) {
      ASSERT_EQ(xid_next(*k, 4000, kT + 100).step, Step::kIssued);
    }
  }
}

// More shards than slots, round-robin: every call may take a slot over from another shard, yet
// each shard's values strictly increase and none waits (a claim continues above retired, the
// highest word of a slot that changed hands: the same second, the next counter).
TEST(StreamShard, MoreShardsThanSlotsKeepEachShardsOrderWithoutWaiting) {
  constexpr uint32_t kShards = 3 * kShardStreams + 1;
  auto k = std::make_unique<SecondStreams>();
  k->init();
  auto s = std::make_unique<SnoStreams>();
  s->init();
  std::map<uint32_t, std::vector<uint8_t>> prev_xid, prev_sno;
  for (int round = 0; round < 50; ++round)
    for (uint32_t shard = 0; shard < kShards; ++shard) {
      const NextResult x = xid_next(*k, shard * 7, kT + 1);
      ASSERT_EQ(x.step, Step::kIssued);
      EXPECT_EQ(x.value >> kCounterBits, kTs);
      const std::vector<uint8_t> b = xid_bytes(x.value, shard * 7);
      if (prev_xid.count(shard)) {
        ASSERT_GT(b, prev_xid[shard]);
      }
      prev_xid[shard] = b;
      const NextResult n = sno_next(*s, shard * 7, kT + 1);
      ASSERT_EQ(n.step, Step::kIssued);
      const std::vector<uint8_t> c = sno_bytes(n.value, shard * 7);
      if (prev_sno.count(shard)) {
        ASSERT_GT(c, prev_sno[shard]);
      }
      prev_sno[shard] = c;
    }
  // A shard is in one slot at most.
  std::vector<uint32_t> held;
  for (const auto &o : k->shards.owners)
    if (owner_shard_plus_one(o.load()) != 0) held.push_back(owner_shard_plus_one(o.load()));
  std::sort(held.begin(), held.end());
  EXPECT_EQ(std::adjacent_find(held.begin(), held.end()), held.end());
  EXPECT_EQ(held.size(), static_cast<size_t>(kShardStreams));
}

// A value taken while its slot changes hands (another shard claims it between the value's
// compare-and-swap and its check of the owner) is dropped and taken again, above every value
// of its shard, in the slot it claims next.
TEST(StreamShard, AValueTakenWhileItsSlotChangesHandsIsTakenAgain) {
  auto k = std::make_unique<SecondStreams>();
  k->init();
  ASSERT_EQ(xid_next(*k, 3, kT).value, word(kTs, 0));  // shard 3's slot: one value
  for (uint32_t shard = 10; shard < 10 + kShardStreams - 1; ++shard)
    for (int i = 0; i < 5; ++i) ASSERT_EQ(xid_next(*k, shard, kT).step, Step::kIssued);
  NextResult other{Step::kWait, 0};
  int tries = 0;
  const NextResult mine = issue_for_shard(k->shards, 3, [&](std::atomic<uint64_t> &last) {
    const NextResult r = seconds::next(last, k->floor_unix_ms, kT, 1024, UINT64_MAX, kXid);
    // Every slot held: shard 100 takes the least recently used, shard 3's (its word lowest).
    if (++tries == 1) other = xid_next(*k, 100, kT);
    return r;
  });
  EXPECT_EQ(tries, 2);
  EXPECT_EQ(other.value, word(kTs, 2));  // above the dropped (kTs, 1), retired with the slot
  // Shard 3 claims shard 100's slot (now the lowest), above retired: never back to (kTs, 1).
  EXPECT_EQ(mine.value, word(kTs, 3));
  EXPECT_EQ(k->shards.retired.load(), word(kTs, 2));
}

// A shard that lost its slot and claims one again starts above every value it issued, here in
// the next second, its old slot having run to the lead: the claim waits one unit, no more.
TEST(StreamShard, AShardBackInAnotherSlotStartsAboveItsValuesWithinOneUnitsWait) {
  auto k = std::make_unique<SecondStreams>();
  k->init();
  for (uint32_t shard = 0; shard < kShardStreams; ++shard)
    ASSERT_EQ(xid_next(*k, shard, kT).step, Step::kIssued);
  // Every stream ran to the lead (a second ahead, full); shard 0's (slot 0) two values less far.
  for (auto &w : k->shards.words) w.last.store(word(kTs + 1, kMaxCounter));
  k->shards.words[0].last.store(word(kTs + 1, kMaxCounter - 2));
  ASSERT_EQ(xid_next(*k, 0, kT).value, word(kTs + 1, kMaxCounter - 1));  // shard 0's last value
  // Shard 500 takes the least recently used slot, shard 0's.
  ASSERT_EQ(xid_next(*k, 500, kT).value, word(kTs + 1, kMaxCounter));
  // Shard 0 comes back in another slot, above retired: the next second, past the lead.
  const NextResult wait = xid_next(*k, 0, kT);
  ASSERT_EQ(wait.step, Step::kWait);
  EXPECT_EQ(wait.value, 1000u);
  EXPECT_EQ(xid_next(*k, 0, kT + 1000).value, word(kTs + 2, 0));
}

// Threads on several shards, more shards than slots, each calling flat out: no two values of a
// shard are equal, and a value issued after another of its shard was returned is above it
// (tickets taken before each call and after each return order them, as backends' issue order).
TEST(StreamShard, ThreadsOnManyShardsNeverDuplicateAndKeepEachShardsIssueOrder) {
  auto k = std::make_unique<SecondStreams>();
  k->init();
  constexpr int kThreads = 8, kEach = 20000;
  constexpr uint32_t kShards = kShardStreams + 8;
  struct Got {
    uint32_t shard;
    uint64_t value, before, after;
  };
  std::atomic<uint64_t> ticket{0};
  std::vector<std::vector<Got>> got(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        // Most calls on the thread's own shard, some on the shards every thread shares.
        const uint32_t shard = i % 4 == 0 ? static_cast<uint32_t>(i / 4) % kShards
                                          : static_cast<uint32_t>(t) * 3 % kShards;
        const uint64_t before = ticket.fetch_add(1);
        const NextResult r = xid_next(*k, shard, kT);
        const uint64_t after = ticket.fetch_add(1);
        if (r.step != Step::kIssued) ++failures;
        got[t].push_back(Got{shard, r.value, before, after});
      }
    });
  for (std::thread &th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::map<uint32_t, std::vector<Got>> by_shard;
  for (const auto &g : got)
    for (const Got &v : g) by_shard[v.shard].push_back(v);
  for (auto &[shard, vs] : by_shard) {
    std::sort(vs.begin(), vs.end(), [](const Got &a, const Got &b) { return a.value < b.value; });
    uint64_t max_before = 0;
    for (size_t i = 0; i < vs.size(); ++i) {
      if (i > 0) {
        ASSERT_LT(vs[i - 1].value, vs[i].value) << "a duplicate on shard " << shard;
      }
      // No value below another whose call began after this one returned.
      ASSERT_GE(vs[i].after, max_before) << "out of issue order on shard " << shard;
      max_before = std::max(max_before, vs[i].before);
    }
  }
}

// Every shard's stream starts from the kind's one floor (the reservation loaded at start, one
// replayed from WAL, a new lease range's), and every shard's stream counts for the reservation
// left at exit and for a lease's final mark.
TEST(StreamShard, EveryShardsStreamStartsFromTheFloorAndCountsAtExit) {
  auto state = std::make_unique<SharedStateT<SpinLock>>();
  state->init();
  state->streams.raise_floors(kT + 1250);
  EXPECT_EQ(xid_next(state->streams.rsxid, 1, kT + 1250).value, word(kTs + 2, 0));
  EXPECT_EQ(xid_next(state->streams.rsxid, 2, kT + 1250).value, word(kTs + 2, 0));
  ASSERT_EQ(sno_next(state->streams.sno, 1, kT + 8).step, Step::kIssued);
  // Shard 2's stream runs a second further; the exit's reservation and the mark count it.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(xid_next(state->streams.rsxid, 2, kT + 1250).step, Step::kIssued);
  state->streams.rsxid.shards.words[0].last.store(word(kTs + 2, 5));
  uint32_t slot2 = 0;
  while (owner_shard_plus_one(state->streams.rsxid.shards.owners[slot2].load()) != 3) ++slot2;
  state->streams.rsxid.shards.words[slot2].last.store(word(kTs + 3, 0));
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kT + 3000);
  EXPECT_EQ(range_high_unix_ms(*state, 1, 1, kDefaultEpochMs), kT + 3000);
  // A sno (partition 1, slot 0) further ahead counts too.
  state->streams.sno.words[0].last.store((kTUnit + 1000) << sno::kSeqBits);
  EXPECT_EQ(high_water_unix_ms(*state, kDefaultEpochMs), kT + 4003);
  EXPECT_EQ(range_high_unix_ms(*state, 7, 1, kDefaultEpochMs), kT + 4003);
  // A new lease range starts past every shard's last second.
  state->streams.raise_floors_for_range(kT);
  EXPECT_EQ(state->streams.rsxid.floor_unix_ms.load(), kT + 4000);
}
