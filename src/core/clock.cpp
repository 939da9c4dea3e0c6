#include "core/clock.hpp"

namespace snowflake {

namespace {
bool far_apart(int64_t a, int64_t b) noexcept {
  return a == kClockUnset || b == kClockUnset ||
         (a > b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                : static_cast<uint64_t>(b) - static_cast<uint64_t>(a)) >
             static_cast<uint64_t>(kStepThresholdNs);
}
}  // namespace

SyncResult clock_sync(ClockState &state, const ClockSnapshot &snap, int64_t seen,
                      ClockTick &tick) noexcept {
  int64_t expected = snap.offset_ns;
  if (snap.offset_ns == kClockUnset || seen > snap.offset_ns) {
    if (!state.offset_ns.compare_exchange_strong(expected, seen)) return SyncResult::kRetry;
    if (snap.offset_ns != kClockUnset && seen - snap.offset_ns > kStepThresholdNs) {
      state.steps_forward.fetch_add(1, std::memory_order_relaxed);
      tick.event = ClockEvent::kStepForward;
      tick.step_ns = seen - snap.offset_ns;
    }
    if (snap.offset_ns == kClockUnset) return SyncResult::kDone;
  }
  if (seen >= snap.offset_ns - kStepThresholdNs) {
    // The wall clock agrees with the IDs' time again: a later backward step is a new event.
    if (snap.back_event_ns != kClockUnset) {
      expected = snap.back_event_ns;
      state.back_event_ns.compare_exchange_strong(expected, kClockUnset);
    }
    return SyncResult::kDone;
  }
  // Behind by more than the threshold: report each distinct step once, server-wide. A
  // reading less far behind than the one reported is the clock corrected part of the way:
  // remembered, so that a later step back is measured from it, and not reported.
  if (!far_apart(seen, snap.back_event_ns)) return SyncResult::kDone;
  expected = snap.back_event_ns;
  if (snap.back_event_ns != kClockUnset && seen > snap.back_event_ns)
    return state.back_event_ns.compare_exchange_strong(expected, seen) ? SyncResult::kDone
                                                                       : SyncResult::kRetry;
  if (!state.back_event_ns.compare_exchange_strong(expected, seen)) return SyncResult::kRetry;
  state.steps_back.fetch_add(1, std::memory_order_relaxed);
  tick.event = ClockEvent::kStepBack;
  tick.step_ns = snap.offset_ns - seen;
  return SyncResult::kDone;
}

}  // namespace snowflake
