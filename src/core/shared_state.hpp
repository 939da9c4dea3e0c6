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
// - The durable reservation is written by one process alone, a background worker (the
//   glue's reservation.cpp), since writing it means a file and two fsyncs. Generators read
//   it as one atomic word, ask for more by raising another (requested_unix_ms) and waking
//   the worker, and never write it themselves.
// The clock state (clock.hpp) is atomic words changed by compare-and-swap, like a shard.
#pragma once
#include "core/pg_free.hpp"

#include "core/block_line.hpp"
#include "core/clock.hpp"
#include "core/id128.hpp"
#include "core/layout.hpp"
#include "core/lease.hpp"
#include "core/second_stream.hpp"
#include "core/sno_stream.hpp"
#include "core/stream_shard.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace snowflake {

// One cache line per shard, so that clients on different shards do not contend.
struct alignas(64) ShardSlot {
  std::atomic<uint64_t> last;  // (ms << kSeqBits) | seq of the last ID issued, 0 before any
  // For a range of shards that starts here (next_in_range): the millisecond below which no
  // ID of the range is issued any more.
  std::atomic<uint64_t> range_floor_ms;
  // Blocks taken from this shard since start (snowflake_block), and the values they held.
  std::atomic<uint64_t> blocks;
  std::atomic<uint64_t> block_values;
};

// The time-ordered kinds' streams beside the shards: one for uuidv7() (the same word layout
// as a shard, with a 12-bit counter), one for ulid(); and for the kinds whose values carry a
// shard, one stream per shard in use (stream_shard.hpp's table): sno() (sno_stream.hpp: 4 ms
// units and a 16-bit sequence), rsxid() and ksuid() (second_stream.hpp: seconds and a 24-bit
// counter).
struct alignas(64) UuidSlot {
  std::atomic<uint64_t> last;  // (unix ms << 12) | counter of the last UUIDv7, 0 before any
};

template <typename Lock>
struct alignas(64) Streams128T {
  UuidSlot uuid;
  alignas(64) UlidSlotT<Lock> ulid;
  ShardStreamsT<Lock> sno;  // words: (4 ms unit << 16) | sequence of the last sno
  seconds::StreamsT<Lock> rsxid;
  seconds::StreamsT<Lock> ksuid;

  void init() noexcept {
    uuid.last.store(0);
    ulid.init();
    sno.init();
    rsxid.init();
    ksuid.init();
  }

  // A time every value of an earlier run is below (the reservation loaded at start, or one
  // replayed from WAL): the one-second streams start in a second that begins at or after it.
  // The other kinds need nothing here: their unit is the millisecond, and the clock is carried
  // above it.
  void raise_floors(uint64_t unix_ms) noexcept {
    seconds::raise_floor(rsxid.floor_unix_ms, unix_ms);
    seconds::raise_floor(ksuid.floor_unix_ms, unix_ms);
  }

  // A lease range taken, with its mark (lease mode), before any value is issued on it.
  void raise_floors_for_range(uint64_t mark_unix_ms) noexcept {
    seconds::raise_floor_for_range(rsxid, mark_unix_ms, seconds::kXid);
    seconds::raise_floor_for_range(ksuid, mark_unix_ms, seconds::kKsuid);
  }

  // The latest time a value of the sno streams was issued at (0: none), every shard's.
  uint64_t sno_high_unix_ms(std::memory_order order) const noexcept {
    return sno::word_high_unix_ms(sno.high_word(order));
  }

  // The latest time a value of the one-second streams was issued at (0: none), every shard's.
  uint64_t seconds_high_unix_ms(std::memory_order order) const noexcept {
    return std::max(seconds::word_high_unix_ms(rsxid.shards.high_word(order), seconds::kXid),
                    seconds::word_high_unix_ms(ksuid.shards.high_word(order), seconds::kKsuid));
  }
};

// Why a server issues no value although it could run: the operator must act first. Generators
// meet it only on their slow path (a server that refuses publishes no reservation, so every
// value needs one), never on the hot path.
enum Refusal : int {
  kNotRefused = 0,
  kFileMissing = 1,   // the reservation file, made when the extension was created, is gone
  kEpochChanged = 2,  // snowflake.epoch is not the one the stored IDs were issued with
};

// The durable reservation: every value issued on this server has a time below
// reserved_unix_ms, which is on disk before any value reaches it.
struct alignas(64) Reservation {
  std::atomic<uint64_t> reserved_unix_ms;
  std::atomic<uint64_t> requested_unix_ms;   // the latest time a generator asked to be covered
  std::atomic<void *> writer;                // the writer's latch; nullptr while it is not running
  std::atomic<uint64_t> writes;              // extensions written since start
  std::atomic<uint64_t> last_write_ms;       // how long the last extension took to write
  std::atomic<uint64_t> write_failures;      // writes that failed since start
  std::atomic<int> write_errno;              // the errno of the last failed write
  std::atomic<uint64_t> waits;               // times a generator waited for the writer
  std::atomic<uint64_t> lead_waits;          // waits at snowflake.max_lead, of every kind
  std::atomic<uint64_t> replayed_unix_ms;    // the latest reservation replayed from WAL, 0: none
  std::atomic<uint64_t> observed_unix_ms;    // the latest observed ID that moved the clock, 0: none
  std::atomic<uint64_t> observed_moves;      // observations that moved the clock
  std::atomic<uint64_t> observe_skipped;     // values an apply trigger could not observe
  std::atomic<uint64_t> shard_collisions;    // replicated IDs of this server's own shards
  std::atomic<int> default_shard_reported;   // 1 once a generator said shard 0 is the default
  std::atomic<uint64_t> loaded_unix_ms;      // the reservation read at start (0: none)
  std::atomic<int> writer_pid;               // 0 while no writer runs
  std::atomic<uint64_t> busy_since_mono_ms;  // when the write in progress began, by the
                                             // monotonic clock (0: idle)
  std::atomic<int> refusal;                  // a Refusal: why no value may be issued
  std::atomic<uint64_t> file_epoch_ms;       // with kEpochChanged: the epoch of the stored IDs

  void init() noexcept {
    observe_skipped.store(0);
    shard_collisions.store(0);
    default_shard_reported.store(0);
    loaded_unix_ms.store(0);
    writer_pid.store(0);
    busy_since_mono_ms.store(0);
    refusal.store(0);
    file_epoch_ms.store(0);
    replayed_unix_ms.store(0);
    observed_unix_ms.store(0);
    observed_moves.store(0);
    reserved_unix_ms.store(0);
    requested_unix_ms.store(0);
    writer.store(nullptr);
    writes.store(0);
    last_write_ms.store(0);
    write_failures.store(0);
    write_errno.store(0);
    waits.store(0);
    lead_waits.store(0);
  }

  // A reservation replayed from WAL (on a standby, or in crash recovery): the reservation
  // and what was replayed only rise. Safe to repeat.
  // Returns true if it raised the reservation (which the replaying server then keeps on
  // disk too, so that a restart of a standby does not depend on WAL it no longer has).
  bool raise_from_replay(uint64_t unix_ms) noexcept {
    raise(replayed_unix_ms, unix_ms);
    return raise(reserved_unix_ms, unix_ms);
  }

  static bool raise(std::atomic<uint64_t> &word, uint64_t v) noexcept {
    uint64_t cur = word.load(std::memory_order_relaxed);
    while (cur < v)
      if (word.compare_exchange_weak(cur, v, std::memory_order_acq_rel, std::memory_order_relaxed))
        return true;
    return false;
  }

  // A generator's request that the reservation cover unix_ms; true if it raised the request
  // (and so should wake the writer).
  bool request(uint64_t unix_ms) noexcept {
    uint64_t cur = requested_unix_ms.load(std::memory_order_relaxed);
    while (cur < unix_ms)
      if (requested_unix_ms.compare_exchange_weak(cur, unix_ms, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
        return true;
    return false;
  }
};
static_assert(std::atomic<void *>::is_always_lock_free, "shared-memory atomics must be lock-free");

// The next reservation the writer puts on disk, given the time it must cover (need: the
// later of the clock and the latest request), the clock, the window and how long the last
// write took. It reaches a window and a quarter past need (or twice the last write's time,
// so that slow storage keeps up): with requests coming a quarter window before the
// reservation (reservation_due), that is one write per window of ID time. While IDs run
// ahead of the clock (a burst), requests come earlier by the lead, and the reservation
// reaches three times the lead further, so that the lead at least doubles between writes:
// a burst needs a few writes, not one per millisecond.
// It is never below the reservation already published (reserved_ms): IDs may exist up to
// it, and a restarted writer, or a window made smaller, must not take it back.
inline uint64_t reservation_target(uint64_t need_ms, uint64_t now_ms, uint64_t window_ms,
                                   uint64_t last_write_ms, uint64_t reserved_ms) noexcept {
  uint64_t ahead = window_ms + window_ms / 4;
  if (2 * last_write_ms > ahead) ahead = 2 * last_write_ms;
  const uint64_t lead = need_ms > now_ms ? need_ms - now_ms : 0;
  return std::max(need_ms + ahead + 3 * lead, reserved_ms);
}

// What the reservation comes down to at the postmaster's exit, once no process can issue a
// value: just above the last value issued (high_ms, 0 if none), and never below what the
// server started from or replayed (base_ms: values of earlier runs, or of a primary, may
// reach it). Returns 0 when it should stay as it is. So restarts with no value issued between
// them leave the reservation where it was, instead of a window further each time.
inline uint64_t reservation_at_exit(uint64_t high_ms, uint64_t base_ms,
                                    uint64_t reserved_ms) noexcept {
  const uint64_t target = std::max(high_ms == 0 ? 0 : high_ms + 1, base_ms);
  return target < reserved_ms ? target : 0;
}

// How far a reservation may legitimately be ahead of the clock at a start: its reach past
// the last IDs (a window and a quarter, and up to four times the lead of a burst that ran
// ahead, snowflake.max_lead at most). A clock further behind it was set back.
inline uint64_t reservation_reach_ms(uint64_t window_ms, uint64_t max_lead_ms) noexcept {
  return 2 * window_ms + 4 * max_lead_ms;
}

// Whether a value at unix_ms, lead_ms ahead of the clock, is close enough to the reservation
// that the writer should extend it now, before any generator has to wait: within a quarter
// window, and earlier by the lead, since a stream that runs ahead of the clock reaches the
// reservation faster than the clock does.
inline bool reservation_due(uint64_t unix_ms, uint64_t reserved_ms, uint64_t window_ms,
                            uint64_t lead_ms) noexcept {
  return unix_ms + window_ms / 4 + lead_ms >= reserved_ms;
}

template <typename Lock>
struct SharedStateT {
  ClockState clock;
  Reservation reservation;
  Streams128T<Lock> streams;
  LeaseSlot lease;  // snowflake.shard_source = etcd: the range leased
  BlockLine line;   // blocks waiting to be taken (block_line.hpp)
  ShardSlot shards[kShardCount];

  void init() noexcept {
    clock.init();
    reservation.init();
    streams.init();
    lease.init();
    line.init();
    for (ShardSlot &s : shards) {
      s.last.store(0);
      s.range_floor_ms.store(0);
      s.blocks.store(0);
      s.block_values.store(0);
    }
  }
};

// The time of the latest value any stream issued since start, or of the latest ID observed
// (snowflake_observe), in Unix milliseconds (0 if none): what the reservation can be lowered
// to once no process can issue more.
template <typename Lock>
inline uint64_t high_water_unix_ms(const SharedStateT<Lock> &state, uint64_t epoch_ms) noexcept {
  uint64_t high = 0;
  for (const ShardSlot &s : state.shards) {
    const uint64_t last = s.last.load(std::memory_order_acquire);
    if (last != 0) high = std::max(high, (last >> kSeqBits) + epoch_ms);
  }
  const uint64_t uuid = state.streams.uuid.last.load(std::memory_order_acquire);
  if (uuid != 0) high = std::max(high, uuid >> kUuidCounterBits);
  const uint64_t ulid_hi = state.streams.ulid.hi.load(std::memory_order_acquire);
  if (ulid_hi != 0) high = std::max(high, ulid_hi >> (kUlidRandomBits - 64));
  high = std::max(high, state.streams.sno_high_unix_ms(std::memory_order_acquire));
  high = std::max(high, state.streams.seconds_high_unix_ms(std::memory_order_acquire));
  // An observed ID counts as one issued here: IDs after a restart must stay above it too.
  return std::max(high, state.reservation.observed_unix_ms.load(std::memory_order_acquire));
}

// The latest time a value of the shards first to first + count - 1 was issued at, in Unix
// milliseconds (0 if none): what the final mark of a lease's clean stop must exceed, since the
// next holder of those shards starts just past it. The sno streams count too: snos carry the
// leased range's first shard as their partition, and a next holder whose clock is behind would
// otherwise make them again. So do the rsxid and ksuid streams, whose values carry that shard
// too. Every shard's stream of these kinds counts, not only the range's (the range's shard may
// have lost its slot, its values recorded in the table's retired word): the mark is then higher
// than it needs to be, never lower.
template <typename Lock>
inline uint64_t range_high_unix_ms(const SharedStateT<Lock> &state, uint32_t first, uint32_t count,
                                   uint64_t epoch_ms) noexcept {
  uint64_t high = 0;
  for (uint32_t s = first; s < first + count && s <= kMaxShard; ++s) {
    const uint64_t last = state.shards[s].last.load(std::memory_order_seq_cst);
    if (last != 0) high = std::max(high, (last >> kSeqBits) + epoch_ms);
  }
  high = std::max(high, state.streams.sno_high_unix_ms(std::memory_order_seq_cst));
  return std::max(high, state.streams.seconds_high_unix_ms(std::memory_order_seq_cst));
}

}  // namespace snowflake
