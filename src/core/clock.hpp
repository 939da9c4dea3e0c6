// A clock that never goes backwards, shared by every backend of a server.
//
// The IDs' time is CLOCK_MONOTONIC plus an offset kept in shared memory. The offset is the
// largest (wall - monotonic) difference ever seen. NTP slewing changes both clocks alike, so
// the difference only moves when the wall clock is stepped:
//   - a forward step raises the offset at once, and IDs follow the wall clock;
//   - a backward step is ignored, so IDs keep advancing at real-time rate from where they
//     were, neither stalling nor repeating; they stay ahead of the wall clock by the step
//     until the wall clock is stepped forward again.
// The hot path reads the monotonic clock only; the wall clock is compared at most once per
// millisecond per backend, which is how quickly a forward step is followed.
//
// After a restart the IDs' time is also never below a floor: the durable reservation, which
// every ID issued before the restart was below. The floor is not a new time for the clock:
// while the wall clock is behind it the IDs' time stays at the floor (their sequences carry
// them on, within snowflake.max_lead), and once the wall clock passes it the floor no longer
// matters. So a restart leaves no lasting lead, however often it happens.
#pragma once
#include "pg_free.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

namespace snowflake {

constexpr int64_t kClockUnset = std::numeric_limits<int64_t>::min();
constexpr int64_t kSyncIntervalNs = 1000000;  // compare with the wall clock once per ms
constexpr int64_t kStepThresholdNs = 1000000; // a change of the offset by more is a step
constexpr int64_t kMaxSyncSpreadNs = 50000;   // readings this far apart were preempted: retry
constexpr int kMaxSyncAttempts = 4;

struct ClockState {
  std::atomic<int64_t> offset_ns;      // largest (wall - monotonic) seen, or kClockUnset
  std::atomic<int64_t> back_event_ns;  // offset of the backward step last reported
  std::atomic<uint64_t> steps_back;
  std::atomic<uint64_t> steps_forward;
  std::atomic<int64_t> floor_ns;       // the IDs' time is never below this (kClockUnset: none)

  void init() noexcept {
    floor_ns.store(kClockUnset);
    offset_ns.store(kClockUnset);
    back_event_ns.store(kClockUnset);
    steps_back.store(0);
    steps_forward.store(0);
  }
};
static_assert(std::atomic<int64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

// Per backend: when this backend next compares the wall clock with the monotonic one.
struct LocalClock {
  int64_t next_sync_ns = kClockUnset;
};

enum class ClockEvent : uint8_t { kNone, kStepBack, kStepForward };

struct ClockTick {
  int64_t unix_ns;   // the IDs' time: never smaller than a previous tick of any backend
  ClockEvent event;  // a step seen by this call, to be reported once
  int64_t step_ns;   // its size
};

// At server start: the IDs' time follows the wall clock, and is never below floor_unix_ns
// (the durable reservation), so that no ID repeats one issued before a restart even when the
// clock was set back meanwhile. Returns how far the floor is ahead of the wall clock (0 if it
// is not). A gap up to step_threshold_ns is the reservation's own reach past the last IDs,
// not a fault; a larger one means the clock was set back while the server was down, and
// counts as a backward step (which the caller reports).
inline int64_t clock_start_at(ClockState &state, int64_t mono_ns, int64_t wall_ns,
                              int64_t floor_unix_ns, int64_t step_threshold_ns) noexcept {
  state.offset_ns.store(wall_ns - mono_ns);
  state.floor_ns.store(floor_unix_ns);
  const int64_t gap = floor_unix_ns > wall_ns ? floor_unix_ns - wall_ns : 0;
  if (gap > step_threshold_ns) state.steps_back.fetch_add(1, std::memory_order_relaxed);
  return gap;
}

// Raises the floor (never lowers it): a reservation replayed from WAL on a standby, so that
// after a promotion every ID is above every ID of the rows replayed. Safe to repeat.
// Returns true if it raised it.
inline bool clock_raise_floor(ClockState &state, int64_t floor_unix_ns) noexcept {
  int64_t cur = state.floor_ns.load(std::memory_order_relaxed);
  while (cur < floor_unix_ns)
    if (state.floor_ns.compare_exchange_weak(cur, floor_unix_ns, std::memory_order_acq_rel,
                                             std::memory_order_relaxed))
      return true;
  return false;
}

enum class Observed : uint8_t { kBehind, kRaised, kTooFarAhead };

// An ID seen from elsewhere (another server, a service), whose time is observed_unix_ms:
// after this, every tick is in a later millisecond, so every ID issued here is above it
// (a hybrid logical clock's receive rule). tick_unix_ns is a tick just taken, clock_unix_ns
// the clock without the floor (monotonic plus offset). An ID more than max_ahead_ms ahead of
// that clock is refused, not followed: measured from the clock and not from the floor, so
// that observations cannot ratchet the IDs' time further ahead, one bound at a time.
inline Observed clock_observe(ClockState &state, int64_t tick_unix_ns, int64_t clock_unix_ns,
                              int64_t observed_unix_ms, int64_t max_ahead_ms) noexcept {
  // In milliseconds: an observed time can be far past what nanoseconds hold in 64 bits.
  if (tick_unix_ns / 1000000 > observed_unix_ms) return Observed::kBehind;
  if (clock_unix_ns == kClockUnset || observed_unix_ms - clock_unix_ns / 1000000 > max_ahead_ms)
    return Observed::kTooFarAhead;
  return clock_raise_floor(state, (observed_unix_ms + 1) * 1000000) ? Observed::kRaised
                                                                     : Observed::kBehind;
}

// The clock without its floor (kClockUnset before it is started).
inline int64_t clock_unfloored(const ClockState &state, int64_t mono_ns) noexcept {
  const int64_t offset = state.offset_ns.load(std::memory_order_acquire);
  return offset == kClockUnset ? kClockUnset : mono_ns + offset;
}

// The state as read before a reading of the clocks, so that a reading is never older than
// the state it is compared with (a reading taken before another backend moved the state
// could otherwise report a step that did not happen).
struct ClockSnapshot {
  int64_t offset_ns;
  int64_t back_event_ns;
};

inline ClockSnapshot clock_snapshot(const ClockState &state) noexcept {
  return ClockSnapshot{state.offset_ns.load(std::memory_order_acquire),
                       state.back_event_ns.load(std::memory_order_acquire)};
}

enum class SyncResult : uint8_t { kDone, kRetry };

// Applies one reading (wall - monotonic, seen after the snapshot) to the shared state,
// changing it only from the snapshot's values; kRetry when another backend changed it first.
// A step event goes to exactly one caller, in tick.
SyncResult clock_sync(ClockState &state, const ClockSnapshot &snap, int64_t seen_ns,
                      ClockTick &tick) noexcept;

// fast() reads the monotonic clock for the hot path and may extrapolate (TscMono);
// comparisons with the wall clock take real readings, mono().
template <typename FastFn, typename MonoFn, typename WallFn>
inline ClockTick clock_now(ClockState &state, LocalClock &local, FastFn fast, MonoFn mono,
                           WallFn wall) noexcept {
  ClockTick tick{0, ClockEvent::kNone, 0};
  int64_t m = fast();
  if (m >= local.next_sync_ns ||
      state.offset_ns.load(std::memory_order_relaxed) == kClockUnset) {
    for (int attempt = 1; attempt <= kMaxSyncAttempts; ++attempt) {
      const ClockSnapshot snap = clock_snapshot(state);
      const int64_t m1 = mono();
      const int64_t w = wall();
      m = mono();
      // Readings far apart were preempted: try again, and give up (until the next call)
      // unless there is no offset at all yet. wall - m is never above the true offset.
      if (m - m1 > kMaxSyncSpreadNs && attempt < kMaxSyncAttempts) continue;
      if (m - m1 > kMaxSyncSpreadNs && snap.offset_ns != kClockUnset) break;
      if (clock_sync(state, snap, w - m, tick) == SyncResult::kDone) {
        local.next_sync_ns = m + kSyncIntervalNs;
        break;
      }
    }
  }
  tick.unix_ns = std::max(m + state.offset_ns.load(std::memory_order_relaxed),
                          state.floor_ns.load(std::memory_order_relaxed));
  return tick;
}

template <typename MonoFn, typename WallFn>
inline ClockTick clock_now(ClockState &state, LocalClock &local, MonoFn mono,
                           WallFn wall) noexcept {
  return clock_now(state, local, mono, mono, wall);
}

// The IDs' time as the shared state has it, without comparing the wall clock: for a process
// that takes part in no step detection (the reservation writer), so that only the processes
// that issue IDs move the clock. kClockUnset before the clock is started.
inline int64_t clock_peek(const ClockState &state, int64_t mono_ns) noexcept {
  const int64_t offset = state.offset_ns.load(std::memory_order_acquire);
  const int64_t floor = state.floor_ns.load(std::memory_order_relaxed);
  return offset == kClockUnset ? floor : std::max(mono_ns + offset, floor);
}

}  // namespace snowflake
