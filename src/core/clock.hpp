// A clock that never goes backwards, shared by every backend of a server.
//
// The IDs' time is CLOCK_MONOTONIC plus an offset kept in shared memory. The offset is the
// largest (wall - monotonic) difference ever seen, or a time the clock was told to run from.
// NTP slewing changes both clocks alike, so the difference only moves when the wall clock is
// stepped:
//   - a forward step raises the offset at once, and IDs follow the wall clock;
//   - a backward step is ignored, so IDs keep advancing at real-time rate from where they
//     were, neither stalling nor repeating; they stay ahead of the wall clock by the step
//     until the wall clock is stepped forward again.
// The hot path reads the monotonic clock only; the wall clock is compared at most once per
// millisecond per backend, which is how quickly a forward step is followed.
//
// Beside the offset, a floor: a line that rises at 3/4 of real-time rate from a time the IDs
// must stay above (a reservation at start, one replayed from WAL, an observed ID), so that a
// small lead over the wall clock fades (in four times its size) while generation keeps at
// least 3/4 of its pace. A time further ahead than the caller's bound is a clock fault, not a
// lead: the clock runs from it at real-time rate (clock_carry), so nothing slows down at all,
// and IDs keep that lead until the wall clock catches up or is corrected.
#pragma once
#include "core/pg_free.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

namespace snowflake {

constexpr int64_t kClockUnset = std::numeric_limits<int64_t>::min();
constexpr int64_t kSyncIntervalNs = 1000000;   // compare with the wall clock once per ms
constexpr int64_t kStepThresholdNs = 1000000;  // a change of the offset by more is a step
constexpr int64_t kMaxSyncSpreadNs = 50000;    // readings this far apart were preempted: retry
constexpr int kMaxSyncAttempts = 4;

struct ClockState {
  std::atomic<int64_t> offset_ns;      // largest (wall - monotonic) seen, or kClockUnset
  std::atomic<int64_t> back_event_ns;  // offset of the backward step last reported
  std::atomic<uint64_t> steps_back;
  std::atomic<uint64_t> steps_forward;
  std::atomic<int64_t> floor_base_ns;  // the floor line's base (clock_floor_at), or kClockUnset

  void init() noexcept {
    floor_base_ns.store(kClockUnset);
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
  int64_t mono_ns;   // the monotonic reading the time was taken from
};

// The floor line at monotonic time mono_ns: base + 3/4 of mono (kClockUnset: none).
constexpr int64_t kFloorMarginNs = 1000000;  // a floor is raised this much early, see below
inline int64_t floor_part(int64_t mono_ns) noexcept { return mono_ns - mono_ns / 4; }

inline int64_t clock_floor_at(const ClockState &state, int64_t mono_ns) noexcept {
  const int64_t base = state.floor_base_ns.load(std::memory_order_acquire);
  return base == kClockUnset ? kClockUnset : base + floor_part(mono_ns);
}

// Raises the floor line (never lowers it) so that every tick from mono_ns on is at or above
// unix_ns. Another backend's monotonic reading can lag this one by microseconds (an
// extrapolated counter), so the line reaches unix_ns kFloorMarginNs early. Safe to repeat.
// Returns true if it raised it.
inline bool clock_raise_floor(ClockState &state, int64_t unix_ns, int64_t mono_ns) noexcept {
  const int64_t base = unix_ns - floor_part(mono_ns - kFloorMarginNs);
  int64_t cur = state.floor_base_ns.load(std::memory_order_relaxed);
  while (cur == kClockUnset || cur < base)
    if (state.floor_base_ns.compare_exchange_weak(cur, base, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
      return true;
  return false;
}

// The clock without its floor (kClockUnset before it is started).
inline int64_t clock_unfloored(const ClockState &state, int64_t mono_ns) noexcept {
  const int64_t offset = state.offset_ns.load(std::memory_order_acquire);
  return offset == kClockUnset ? kClockUnset : mono_ns + offset;
}

// Raises the offset so that the clock reads at least unix_ns at mono_ns: from then on it runs
// from there at real-time rate. wall_ns (kClockUnset if not read) is the wall clock now: the
// gap between the two is recorded as a backward step already reported, so that the caller's
// own message is the only one. Returns true if it raised the offset.
inline bool clock_run_from(ClockState &state, int64_t unix_ns, int64_t mono_ns,
                           int64_t wall_ns) noexcept {
  const int64_t offset = unix_ns - mono_ns;
  int64_t cur = state.offset_ns.load(std::memory_order_relaxed);
  bool raised = false;
  while (cur == kClockUnset || cur < offset) {
    if (state.offset_ns.compare_exchange_weak(cur, offset, std::memory_order_acq_rel,
                                              std::memory_order_relaxed)) {
      raised = true;
      break;
    }
  }
  if (raised) {
    state.steps_back.fetch_add(1, std::memory_order_relaxed);
    if (wall_ns != kClockUnset) state.back_event_ns.store(wall_ns - mono_ns);
  }
  return raised;
}

enum class Carried : uint8_t { kBelow, kFloor, kRunFrom };

// A time every later ID must be above (a reservation read at start or replayed from WAL):
// within hold_ns of the clock it is a floor that the wall clock soon passes; further ahead,
// the wall clock is wrong (set back while the server was down, or a standby's clock behind
// its primary's), and the clock runs from it at real-time rate, so that generation keeps its
// pace instead of waiting for the wall clock. kBelow: the clock is already past it.
inline Carried clock_carry(ClockState &state, int64_t unix_ns, int64_t mono_ns, int64_t wall_ns,
                           int64_t hold_ns) noexcept {
  const int64_t clock = clock_unfloored(state, mono_ns);
  if (clock != kClockUnset && clock >= unix_ns) return Carried::kBelow;
  if (clock == kClockUnset || unix_ns - clock > hold_ns)
    return clock_run_from(state, unix_ns, mono_ns, wall_ns) ? Carried::kRunFrom : Carried::kBelow;
  return clock_raise_floor(state, unix_ns, mono_ns) ? Carried::kFloor : Carried::kBelow;
}

// At server start: the IDs' time follows the wall clock, and stays above floor_unix_ns (the
// durable reservation), so that no ID repeats one issued before a restart even when the
// clock was set back meanwhile (clock_carry, with the reservation's own reach past the last
// IDs as the bound: a crash leaves that much, which fades). Returns how far the reservation
// is ahead of the wall clock (0 if it is not).
inline int64_t clock_start_at(ClockState &state, int64_t mono_ns, int64_t wall_ns,
                              int64_t floor_unix_ns, int64_t hold_ns) noexcept {
  state.offset_ns.store(wall_ns - mono_ns);
  if (floor_unix_ns <= wall_ns) return 0;
  (void)clock_carry(state, floor_unix_ns, mono_ns, wall_ns, hold_ns);
  return floor_unix_ns - wall_ns;
}

enum class Observed : uint8_t { kBehind, kRaised, kTooFarAhead };

// An ID seen from elsewhere (another server, a service), whose time is observed_unix_ms:
// after this, every tick is in a later millisecond, so every ID issued here is above it
// (a hybrid logical clock's receive rule). tick_unix_ns is a tick just taken, clock_unix_ns
// the clock without the floor (monotonic plus offset), mono_ns the monotonic reading it was
// taken from. An ID more than max_ahead_ms ahead of that clock is refused, not followed:
// measured from the clock and not from the floor, so that observations cannot ratchet the
// IDs' time further ahead, one bound at a time. It raises the floor line, so the lead it
// makes fades, and generation keeps 3/4 of its pace meanwhile.
// Behind means a full millisecond behind: another backend's tick can trail this one's by
// microseconds, and must not issue in the observed millisecond either.
inline Observed clock_observe(ClockState &state, int64_t tick_unix_ns, int64_t clock_unix_ns,
                              int64_t mono_ns, int64_t observed_unix_ms,
                              int64_t max_ahead_ms) noexcept {
  // In milliseconds: an observed time can be far past what nanoseconds hold in 64 bits.
  if (tick_unix_ns / 1000000 > observed_unix_ms + 1) return Observed::kBehind;
  if (clock_unix_ns == kClockUnset || observed_unix_ms - clock_unix_ns / 1000000 > max_ahead_ms)
    return Observed::kTooFarAhead;
  return clock_raise_floor(state, (observed_unix_ms + 1) * 1000000, mono_ns) ? Observed::kRaised
                                                                             : Observed::kBehind;
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
  ClockTick tick{0, ClockEvent::kNone, 0, 0};
  int64_t m = fast();
  if (m >= local.next_sync_ns || state.offset_ns.load(std::memory_order_relaxed) == kClockUnset) {
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
  tick.mono_ns = m;
  tick.unix_ns =
      std::max(m + state.offset_ns.load(std::memory_order_relaxed), clock_floor_at(state, m));
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
  return std::max(clock_unfloored(state, mono_ns), clock_floor_at(state, mono_ns));
}

}  // namespace snowflake
