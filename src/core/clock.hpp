// A clock that never goes backwards, shared by every backend of a server.
//
// The IDs' time is CLOCK_MONOTONIC plus an offset kept in shared memory. The offset is the
// largest (wall - monotonic) difference ever seen. NTP slewing changes both clocks alike, so
// the difference only moves when the wall clock is stepped:
//   - a forward step raises the offset at once, and IDs follow the wall clock;
//   - a backward step is ignored, so IDs keep advancing at real-time rate from where they
//     were, neither stalling nor repeating, until the wall clock catches up.
// The hot path reads the monotonic clock only; the wall clock is compared at most once per
// millisecond per backend, which is how quickly a forward step is followed.
#pragma once
#include "pg_free.hpp"

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

  void init() noexcept {
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

// Applies one (monotonic, wall) reading pair to the shared offset; reports a step event to
// exactly one caller.
ClockTick clock_sync(ClockState &state, int64_t mono_ns, int64_t wall_ns) noexcept;

template <typename MonoFn, typename WallFn>
inline ClockTick clock_now(ClockState &state, LocalClock &local, MonoFn mono,
                           WallFn wall) noexcept {
  int64_t m = mono();
  ClockTick tick{0, ClockEvent::kNone, 0};
  if (m >= local.next_sync_ns ||
      state.offset_ns.load(std::memory_order_relaxed) == kClockUnset) {
    for (int attempt = 1;; ++attempt) {
      int64_t w = wall();
      int64_t m2 = mono();
      if (m2 - m <= kMaxSyncSpreadNs || attempt == kMaxSyncAttempts) {
        tick = clock_sync(state, m + (m2 - m) / 2, w);
        local.next_sync_ns = m2 + kSyncIntervalNs;
        m = m2;
        break;
      }
      m = m2;
    }
  }
  tick.unix_ns = m + state.offset_ns.load(std::memory_order_relaxed);
  return tick;
}

}  // namespace snowflake
