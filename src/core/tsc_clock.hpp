// The monotonic clock, read through the CPU's time-stamp counter between real readings.
//
// Every ID reads the clock, and on x86-64 clock_gettime() is a counter read plus a fence, a
// sequence lock and arithmetic: about 33 ns on the benchmark machine against 20 ns for the
// counter alone. Per backend, this keeps the last real reading and the counter's rate
// (measured between real readings at least kTscCalibrateNs apart) and extrapolates from
// them for at most kTscSpanNs. It reads the real clock instead whenever it has no rate yet,
// the span is over, or the counter is below the last real reading (another CPU's counter).
// An extrapolated time is off by the rate's error over one span: well under a microsecond.
// The caller uses it only where the kernel itself keeps time by the counter (the "tsc"
// clocksource), so that the counter is invariant and the same on every CPU.
#pragma once
#include "pg_free.hpp"

#include <cstdint>

namespace snowflake {

constexpr int64_t kTscSpanNs = 1000000;       // extrapolate at most 1 ms from a real reading
constexpr int64_t kTscCalibrateNs = 1000000;  // measure the rate over at least 1 ms
constexpr uint64_t kTscMaxBracket = 20000;    // counter ticks around a real reading: wider
                                              // means preempted, not used to measure the rate

class TscMono {
 public:
  // tsc() reads the counter, mono() the real monotonic clock in ns.
  template <typename TscFn, typename MonoFn>
  int64_t now(TscFn tsc, MonoFn mono) noexcept {
    const uint64_t t = tsc();
    if (mult_ != 0) {
      const uint64_t d = t - base_tsc_;  // below the base: wraps to a huge value
      if (d < span_ticks_) return base_ns_ + static_cast<int64_t>((d * mult_) >> 32);
    }
    return real(tsc, mono);
  }

  bool calibrated() const noexcept { return mult_ != 0; }

 private:
  template <typename TscFn, typename MonoFn>
  int64_t real(TscFn tsc, MonoFn mono) noexcept {
    const uint64_t t1 = tsc();
    const int64_t m = mono();
    const uint64_t t2 = tsc();
    if (t2 < t1 || t2 - t1 > kTscMaxBracket) {
      span_ticks_ = 0;  // no base to extrapolate from until a clean reading
      return m;
    }
    const uint64_t t = t1 + (t2 - t1) / 2;
    if (!have_calibration_point_ || t <= calib_tsc_ || m < calib_ns_) {
      calib_tsc_ = t;
      calib_ns_ = m;
      have_calibration_point_ = true;
    } else if (m - calib_ns_ >= kTscCalibrateNs) {
      // ns per tick in 32.32 fixed point; a span's ticks times it stay far below 2^64.
      mult_ = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(m - calib_ns_) << 32) / (t - calib_tsc_));
      calib_tsc_ = t;
      calib_ns_ = m;
    }
    base_tsc_ = t;
    base_ns_ = m;
    span_ticks_ = mult_ == 0 ? 0
                             : static_cast<uint64_t>(
                                   (static_cast<unsigned __int128>(kTscSpanNs) << 32) / mult_);
    return m;
  }

  uint64_t base_tsc_ = 0;
  int64_t base_ns_ = 0;
  uint64_t calib_tsc_ = 0;
  int64_t calib_ns_ = 0;
  bool have_calibration_point_ = false;
  uint64_t mult_ = 0;        // ns per tick << 32; 0 until calibrated
  uint64_t span_ticks_ = 0;  // ticks past the base that may be extrapolated; 0: none
};

}  // namespace snowflake
