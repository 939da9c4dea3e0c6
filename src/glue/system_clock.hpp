// The IDs' clock read from the system's clocks (system_clock.cpp has the slow paths): inline, since
// it is on every ID's path. Also the waits for the clock, and the wait events they show.
#pragma once

#include "glue/pg.hpp"
#include "glue/settings.hpp"

namespace snowflake::glue {

extern LocalClock local_clock;
void report_clock_event(const ClockTick &tick);
[[noreturn]] void raise_before_epoch(int64_t unix_ms);

inline int64_t read_clock(clockid_t id) noexcept {
  struct timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Milliseconds on the monotonic clock, for how long a wait has lasted: a step of the real
// clock neither stretches a wait nor ends it early.
inline int64_t monotonic_ms() noexcept { return read_clock(CLOCK_MONOTONIC) / 1000000; }
inline long ms_since(int64_t started_ms) noexcept {
  return static_cast<long>(monotonic_ms() - started_ms);
}

// The monotonic clock through the CPU's counter (TscMono: the time-stamp counter on x86-64,
// CNTVCT_EL0 on ARM64), where the kernel keeps time by it (use_tsc, set in _PG_init); else
// the real clock.
extern TscMono tsc_mono;
extern bool use_tsc;
void detect_tsc();
void report_clock_source();
inline int64_t read_mono_fast() {
#if defined(SNOWFLAKE_CPU_COUNTER)
  if (likely(use_tsc))
    return tsc_mono.now([] { return read_cpu_counter(); },
                        [] { return read_clock(CLOCK_MONOTONIC); });
#endif
  return read_clock(CLOCK_MONOTONIC);
}

// The never-backwards clock in Unix milliseconds; reports clock steps as WARNINGs. *mono_ns,
// if given, receives the monotonic reading it was taken from.
inline uint64_t clock_now_unix_ms(ClockState &clock, int64_t *mono_ns = nullptr) {
  const ClockTick tick = clock_now(
      clock, local_clock, [] { return read_mono_fast(); },
      [] { return read_clock(CLOCK_MONOTONIC); }, [] { return read_clock(CLOCK_REALTIME); });
  if (unlikely(tick.event != ClockEvent::kNone)) report_clock_event(tick);
  if (mono_ns != nullptr) *mono_ns = tick.mono_ns;
  return static_cast<uint64_t>(tick.unix_ns / 1000000);
}

// The same in milliseconds since snowflake.epoch; an ERROR when the clock is before it.
inline uint64_t clock_now_ms(ClockState &clock, int64_t *mono_ns = nullptr) {
  const int64_t unix_ms = static_cast<int64_t>(clock_now_unix_ms(clock, mono_ns));
  if (unlikely(unix_ms < epoch_ms)) raise_before_epoch(unix_ms);
  return static_cast<uint64_t>(unix_ms - epoch_ms);
}

// The wait event that pg_stat_activity shows for a wait of the extension's: on 17 and later a
// name of its own (registered by the first backend that waits, then kept in *cache); before,
// the generic "Extension".
uint32 named_wait_event(const char *name, uint32 *cache);

// Sleeps about ms milliseconds, or less; a cancel, statement_timeout or postmaster death ends
// the wait.
void wait_for_clock(uint64_t ms);
// A wait behind a block in line: ms, at most 1 s; wait event SnowflakeBlockLine.
void wait_in_line(uint64_t ms);

}  // namespace snowflake::glue
