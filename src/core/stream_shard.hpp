// The streams of a kind whose values carry a shard after the time and before the counter
// (sno's partition, an xid's machine id, the head of a KSUID's payload): one stream per shard,
// so that sessions of different shards (snowflake.shard_id set per role or database, a reload,
// a new lease range) neither slow nor reorder one another. Values of one shard strictly
// increase in issue order across every backend; values of different shards are ordered by
// their time unit only, as the values of two servers are.
//
// A kind has a small fixed table of kShardStreams slots in shared memory, each a stream word
// (last) and an owner word naming its shard. A value takes the next word of the slot its shard
// owns, with no lock. A shard without a slot claims one under the table's lock: a free one, or,
// when every slot is held, the least recently used (the one whose last value is lowest). A
// shard holds at most one slot (claims are made under the lock, and look for the shard first).
//
// A shard that claims a slot may have issued in another slot it lost since, and the slot it
// takes may hold another shard's values: so the claim raises the slot's word to at least
// retired, the highest word any slot held when it changed hands. Every earlier value of the
// claiming shard is at or below retired (it was recorded when the shard lost its slot), so the
// next value is above them. retired is a word that was taken within snowflake.max_lead, so a
// claim makes a call wait at most one unit (4 ms for sno, 1 s for rsxid and ksuid) beyond the
// waits its own shard's rate causes at max_lead; while no more than kShardStreams shards were
// used since start, no slot changes hands and retired stays 0: another shard's sessions cause
// no wait at all.
//
// A slot changes hands in four steps under the lock: its owner word is closed (no shard, the
// claim count raised), its word is read into retired, its word is raised to retired, and the
// owner word names the new shard. A value is returned only when its slot's owner word, read
// again after the value's compare-and-swap, is the one read before (every access sequentially
// consistent). A value of the old shard whose swap comes before the close is in the word read
// into retired; one whose swap comes after it reads another owner word and is dropped (a gap,
// never a value out of order) and taken again. The new shard's sessions see its owner word only
// after the word was raised, so they take values above retired.
#pragma once
#include "core/pg_free.hpp"

#include "core/generator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

// Enough for the shards one server's roles and databases use at once; more still work, with a
// slot changing hands (a lock and at most one unit's wait) when a shard comes back.
constexpr uint32_t kShardStreams = 16;

// An owner word: (claims << 32) | (shard + 1); its low half 0: free, or changing hands.
inline uint32_t owner_shard_plus_one(uint64_t owner) noexcept {
  return static_cast<uint32_t>(owner & 0xffffffff);
}

template <typename Lock>
struct ShardStreamsT {
  // One cache line per stream, so that shards do not contend.
  struct alignas(64) Word {
    std::atomic<uint64_t> last;  // the stream's word (its kind's layout), 0: no value yet
  };
  Word words[kShardStreams];
  // Written only when a slot changes hands: read by every value, they stay in its cache.
  alignas(64) std::atomic<uint64_t> owners[kShardStreams];
  std::atomic<uint64_t> retired;  // the highest word of a slot when it changed hands
  Lock lock;                      // held to claim a slot

  void init() noexcept {
    for (Word &w : words) w.last.store(0);
    for (std::atomic<uint64_t> &o : owners) o.store(0);
    retired.store(0);
    lock.init();
  }

  // The highest word any stream of the kind issued (0: none): what the reservation left at exit
  // and a lease's final mark must count.
  uint64_t high_word(std::memory_order order) const noexcept {
    uint64_t high = retired.load(order);
    for (const Word &w : words) high = std::max(high, w.last.load(order));
    return high;
  }

  // The slot shard owns, claimed if it owns none.
  uint32_t claim(uint32_t shard) noexcept {
    const uint32_t mine = shard + 1;
    lock.acquire();
    uint32_t pick = kShardStreams;
    for (uint32_t i = 0; i < kShardStreams; ++i) {
      const uint32_t held = owner_shard_plus_one(owners[i].load(std::memory_order_seq_cst));
      if (held == mine) {  // claimed by another session of the shard meanwhile
        lock.release();
        return i;
      }
      if (held == 0 && pick == kShardStreams) pick = i;
    }
    if (pick == kShardStreams) {  // every slot held: the least recently used
      pick = 0;
      for (uint32_t i = 1; i < kShardStreams; ++i)
        if (words[i].last.load(std::memory_order_relaxed) <
            words[pick].last.load(std::memory_order_relaxed))
          pick = i;
    }
    const uint64_t claims = (owners[pick].load(std::memory_order_seq_cst) >> 32) + 1;
    owners[pick].store(claims << 32, std::memory_order_seq_cst);  // closed
    const uint64_t word = words[pick].last.load(std::memory_order_seq_cst);
    const uint64_t high = std::max(retired.load(std::memory_order_seq_cst), word);
    retired.store(high, std::memory_order_seq_cst);
    uint64_t cur = word;
    while (cur < high &&
           !words[pick].last.compare_exchange_weak(cur, high, std::memory_order_seq_cst)) {
    }
    owners[pick].store((claims + 1) << 32 | mine, std::memory_order_seq_cst);
    lock.release();
    return pick;
  }
};

// The step of a kind whose values carry shard: take(last) is the kind's own step on a stream
// word (a compare-and-swap on it).
template <typename Lock, typename Take>
inline NextResult issue_for_shard(ShardStreamsT<Lock> &t, uint32_t shard, Take take) noexcept {
  const uint32_t mine = shard + 1;
  for (;;) {
    uint32_t i = 0;
    uint64_t seen = 0;
    for (; i < kShardStreams; ++i) {
      seen = t.owners[i].load(std::memory_order_seq_cst);
      if (owner_shard_plus_one(seen) == mine) break;
    }
    if (unlikely_(i == kShardStreams)) {
      i = t.claim(shard);
      seen = t.owners[i].load(std::memory_order_seq_cst);
      if (owner_shard_plus_one(seen) != mine) continue;  // already lost again
    }
    const NextResult r = take(t.words[i].last);
    if (r.step != Step::kIssued || t.owners[i].load(std::memory_order_seq_cst) == seen) return r;
  }
}

}  // namespace snowflake
