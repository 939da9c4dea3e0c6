// The monotonic clock, read through the CPU's counter between real readings: the time-stamp
// counter on x86-64 (rdtsc), the generic timer's virtual counter on ARM64 (CNTVCT_EL0).
//
// Every ID reads the clock, and clock_gettime() is that same counter read plus a fence, a
// sequence lock and arithmetic (bench/core_costs.cpp measures both). Per backend, this keeps
// the last real reading and the counter's rate, measured between real readings at least
// kTscCalibrateNs apart, and extrapolates from them for at most kTscSpanNs. It reads the
// real clock instead whenever it has no rate yet, the span is over, or the counter is below
// the last real reading (another CPU's counter, or a reset). A rate outside the counter's
// limits (CounterLimits), or a real reading that the rate did not predict (the counter
// jumped, or stopped keeping time with the clock), discards the rate until it is measured
// again. So an extrapolated time is never below the last real reading nor more than one span
// past it; with a steady counter it is within a microsecond or so of the clock. One backend's
// readings can therefore step back by that much; IDs do not, as the generators take the
// larger of the time and the last value plus one.
// The caller uses it only where the kernel itself keeps time by the counter (the "tsc" or
// "arch_sys_counter" clocksource), so that the counter is invariant and the same on every CPU.
#pragma once
#include "core/pg_free.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace snowflake {

constexpr int64_t kTscSpanNs = 1000000;       // extrapolate at most 1 ms from a real reading
constexpr int64_t kTscCalibrateNs = 1000000;  // measure the rate over at least 1 ms
// A real reading this far (plus 0.1 % of the time since the last one) from what the rate
// predicts discards the rate.
constexpr int64_t kTscMaxMissNs = 50000;

// The counter as the CPU has it: read_cpu_counter() reads it; cpu_counter_hz() is its
// nominal rate where the CPU tells it (ARM64's CNTFRQ_EL0), 0 where it does not (x86-64).
#if defined(__x86_64__)
#define SNOWFLAKE_CPU_COUNTER 1
inline uint64_t read_cpu_counter() noexcept { return __builtin_ia32_rdtsc(); }
inline uint64_t cpu_counter_hz() noexcept { return 0; }
#elif defined(__aarch64__)
#define SNOWFLAKE_CPU_COUNTER 1
// isb first, as the kernel's own clock_gettime() does: the counter is not read ahead of the
// instructions before it.
inline uint64_t read_cpu_counter() noexcept {
  uint64_t ticks;
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(ticks) : : "memory");
  return ticks;
}
inline uint64_t cpu_counter_hz() noexcept {
  uint64_t hz;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz & 0xffffffff;  // bits 63..32 are reserved
}
#endif

// The clocksource the kernel keeps time by, as sysfs gives it ("tsc\n"); "" when unreadable.
inline void read_clocksource(char *out, size_t size) noexcept {
  out[0] = '\0';
  if (FILE *f =
          std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
    if (std::fgets(out, static_cast<int>(size), f) == nullptr) out[0] = '\0';
    std::fclose(f);
  }
}

// Whether IDs read the CPU's counter instead of clock_gettime(): only where the kernel itself
// keeps time by it, for then it is invariant and the same on every CPU ("tsc" on x86-64; on
// ARM64 "arch_sys_counter", the generic timer, one counter for the whole system, whose
// nominal rate, counter_hz, bounds the measured one). Elsewhere (kvm-clock, say, where the
// kernel may have been told the counter is unstable) the kernel's choice stands.
inline bool counter_is_kernel_clock(const char *clocksource, uint64_t counter_hz) noexcept {
#if defined(__x86_64__)
  (void)counter_hz;
  return std::strcmp(clocksource, "tsc\n") == 0;
#elif defined(__aarch64__)
  return std::strcmp(clocksource, "arch_sys_counter\n") == 0 && counter_hz >= 1000000;
#else
  (void)clocksource;
  (void)counter_hz;
  return false;
#endif
}

// What a counter's rate may be, as ns per tick in 32.32 fixed point, and the widest bracket of
// counter readings around a real reading that still measures it (wider means preempted). A
// rate is still measured against the clock, which the kernel may slew: the nominal rate
// only narrows what a measurement may give.
struct CounterLimits {
  uint64_t min_mult;
  uint64_t max_mult;
  uint64_t max_bracket;  // ticks

  // hz 0 (x86-64's time-stamp counter, whose rate user space cannot read): 0.1 to 10 ns per
  // tick, and 20,000 ticks (7 us at 3 GHz). A nominal rate (ARM64's counter, 1 MHz to 1 GHz
  // on real parts): within an eighth of it, and 10 us of ticks.
  static constexpr CounterLimits for_hz(uint64_t hz) noexcept {
    if (hz == 0) return {(uint64_t{1} << 32) / 10, uint64_t{10} << 32, 20000};
    const uint64_t mult = (uint64_t{1000000000} << 32) / hz;
    return {mult - mult / 8, mult + mult / 8, hz / 100000 + 1};
  }
};

class TscMono {
 public:
  TscMono() noexcept = default;
  // For a counter whose nominal rate is known (cpu_counter_hz(); 0: unknown).
  explicit TscMono(uint64_t counter_hz) noexcept : limits_(CounterLimits::for_hz(counter_hz)) {}

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
    // Preempted: the base stays, and the next call is past its span again.
    if (t2 < t1 || t2 - t1 > limits_.max_bracket) return m;
    const uint64_t t = t1 + (t2 - t1) / 2;
    // A miss also restarts the measurement: the anomaly lies between the old point and now.
    const bool missed = mult_ != 0 && !predicted(t, m);
    if (missed) set_rate(0);
    if (!have_calibration_point_ || missed || t <= calib_tsc_ || m < calib_ns_) {
      calib_tsc_ = t;
      calib_ns_ = m;
      have_calibration_point_ = true;
    } else if (m - calib_ns_ >= kTscCalibrateNs) {
      const unsigned __int128 mult =
          (static_cast<unsigned __int128>(m - calib_ns_) << 32) / (t - calib_tsc_);
      set_rate(mult >= limits_.min_mult && mult <= limits_.max_mult ? static_cast<uint64_t>(mult)
                                                                    : 0);
      calib_tsc_ = t;
      calib_ns_ = m;
    }
    base_tsc_ = t;
    base_ns_ = m;
    return m;
  }

  // The rate (0: none) and the span it allows, together.
  void set_rate(uint64_t mult) noexcept {
    mult_ = mult;
    span_ticks_ =
        mult == 0
            ? 0
            : static_cast<uint64_t>((static_cast<unsigned __int128>(kTscSpanNs) << 32) / mult);
  }

  // Whether the real reading (t, m) is where the rate puts it, from the base.
  bool predicted(uint64_t t, int64_t m) const noexcept {
    if (t < base_tsc_ || m < base_ns_) return false;
    const unsigned __int128 ns = static_cast<unsigned __int128>(t - base_tsc_) * mult_ >> 32;
    const int64_t elapsed = m - base_ns_;
    const int64_t tolerance = kTscMaxMissNs + elapsed / 1000;
    if (ns > static_cast<unsigned __int128>(elapsed + tolerance)) return false;
    return static_cast<int64_t>(ns) >= elapsed - tolerance;
  }

  CounterLimits limits_ = CounterLimits::for_hz(0);
  uint64_t base_tsc_ = 0;
  int64_t base_ns_ = 0;
  uint64_t calib_tsc_ = 0;
  int64_t calib_ns_ = 0;
  bool have_calibration_point_ = false;
  uint64_t mult_ = 0;        // ns per tick << 32; 0 until calibrated
  uint64_t span_ticks_ = 0;  // ticks past the base that may be extrapolated (set_rate)
};

}  // namespace snowflake
