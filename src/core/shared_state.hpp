// Everything the extension keeps in shared memory, one struct so that its size is known.
#pragma once
#include "pg_free.hpp"

#include "clock.hpp"
#include "layout.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake {

// One cache line per shard, so that clients on different shards do not contend.
struct alignas(64) ShardSlot {
  std::atomic<uint64_t> last;  // (ms << kSeqBits) | seq of the last ID issued, 0 before any
};

struct SharedState {
  ClockState clock;
  ShardSlot shards[kShardCount];

  void init() noexcept {
    clock.init();
    for (ShardSlot &s : shards) s.last.store(0);
  }
};

}  // namespace snowflake
