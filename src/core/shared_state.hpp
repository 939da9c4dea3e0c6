// Everything the extension keeps in shared memory, one struct so that its size is known.
//
// Locking. Three schemes, each the lightest that keeps its state consistent:
// - A snowflake shard and the UUIDv7 stream are one 64-bit word each (the last value's
//   millisecond and sequence), advanced by compare-and-swap (generator.hpp): no lock, and
//   clients of different shards never touch the same cache line.
// - The ULID stream is 128 bits that must change as one: a spinlock, held for a few
//   instructions that cannot fail, block or allocate (id128.hpp's ulid_next). Which
//   spinlock is a template parameter: PostgreSQL's own (slock_t, with its stuck-lock
//   detection) in the server, a plain test-and-set one in the unit tests.
// - The durable reservation is extended under an LWLock of its own (the glue's
//   reservation.cpp), since extending it writes and fsyncs a file. Generators read the
//   reservation without the lock (one atomic word) and take the lock only to extend it.
// The clock state (clock.hpp) is atomic words changed by compare-and-swap, like a shard.
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

template <typename Lock>
struct alignas(64) Streams128T {
  UuidSlot uuid;
  alignas(64) UlidSlotT<Lock> ulid;

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

template <typename Lock>
struct SharedStateT {
  ClockState clock;
  Reservation reservation;
  Streams128T<Lock> streams;
  ShardSlot shards[kShardCount];

  void init() noexcept {
    clock.init();
    reservation.init();
    streams.init();
    for (ShardSlot &s : shards) s.last.store(0);
  }
};

}  // namespace snowflake
