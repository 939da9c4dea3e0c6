// Everything the extension keeps in shared memory, one struct so that its size is known.
#pragma once
#include "pg_free.hpp"

#include "clock.hpp"
#include "id128.hpp"
#include "layout.hpp"

#include <atomic>
#include <cstdint>

namespace snowflake {

// One cache line per shard, so that clients on different shards do not contend.
struct alignas(64) ShardSlot {
  std::atomic<uint64_t> last;  // (ms << kSeqBits) | seq of the last ID issued, 0 before any
};

// The 128-bit kinds' streams: one for uuidv7() (the same word layout as a shard, with a
// 12-bit counter), one for ulid().
struct alignas(64) UuidSlot {
  std::atomic<uint64_t> last;  // (unix ms << 12) | counter of the last UUIDv7, 0 before any
};

struct alignas(64) Streams128 {
  UuidSlot uuid;
  alignas(64) UlidSlot ulid;

  void init() noexcept {
    uuid.last.store(0);
    ulid.init();
  }
};

// The durable reservation: every value issued on this server has a time below
// reserved_unix_ms, which is on disk before any value reaches it.
struct alignas(64) Reservation {
  std::atomic<uint64_t> reserved_unix_ms;
  std::atomic<uint64_t> writes;        // extensions written since start
  std::atomic<uint64_t> last_write_ms; // how long the last extension took to write
  std::atomic<uint64_t> lead_waits;    // waits at snowflake.max_lead, of every kind

  void init() noexcept {
    reserved_unix_ms.store(0);
    writes.store(0);
    last_write_ms.store(0);
    lead_waits.store(0);
  }
};

struct SharedState {
  ClockState clock;
  Reservation reservation;
  Streams128 streams;
  ShardSlot shards[kShardCount];

  void init() noexcept {
    clock.init();
    reservation.init();
    streams.init();
    for (ShardSlot &s : shards) s.last.store(0);
  }
};

}  // namespace snowflake
