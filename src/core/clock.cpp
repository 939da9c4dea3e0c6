#include "clock.hpp"

namespace snowflake {

namespace {
bool far_apart(int64_t a, int64_t b) noexcept {
  return a == kClockUnset || b == kClockUnset ||
         (a > b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                : static_cast<uint64_t>(b) - static_cast<uint64_t>(a)) >
             static_cast<uint64_t>(kStepThresholdNs);
}
}  // namespace

ClockTick clock_sync(ClockState &state, int64_t mono_ns, int64_t wall_ns) noexcept {
  const int64_t seen = wall_ns - mono_ns;
  int64_t offset = state.offset_ns.load(std::memory_order_relaxed);
  while (offset == kClockUnset || seen > offset) {
    if (state.offset_ns.compare_exchange_weak(offset, seen)) {
      if (offset != kClockUnset && seen - offset > kStepThresholdNs) {
        state.steps_forward.fetch_add(1, std::memory_order_relaxed);
        return ClockTick{0, ClockEvent::kStepForward, seen - offset};
      }
      return ClockTick{0, ClockEvent::kNone, 0};
    }
  }

  int64_t reported = state.back_event_ns.load(std::memory_order_relaxed);
  if (seen >= offset - kStepThresholdNs) {
    // The wall clock agrees again: a later backward step is a new event.
    if (reported != kClockUnset)
      state.back_event_ns.compare_exchange_strong(reported, kClockUnset);
    return ClockTick{0, ClockEvent::kNone, 0};
  }
  // Behind by more than the threshold: report each distinct step once, server-wide.
  if (far_apart(seen, reported) && state.back_event_ns.compare_exchange_strong(reported, seen)) {
    state.steps_back.fetch_add(1, std::memory_order_relaxed);
    return ClockTick{0, ClockEvent::kStepBack, offset - seen};
  }
  return ClockTick{0, ClockEvent::kNone, 0};
}

}  // namespace snowflake
