// The system clocks, clock-step WARNINGs, and waits at the lead bound.
#include "glue/system_clock.hpp"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

LocalClock local_clock;
TscMono tsc_mono;
bool use_tsc = false;
// What detect_tsc() found: the kernel's clocksource and the counter's nominal rate (0: none).
static char kernel_clocksource[32];
static uint64_t counter_hz;

// The counter is read directly only where the kernel itself keeps time by it
// (counter_is_kernel_clock). Checked once per server start (or per backend when the library
// is not preloaded).
void detect_tsc() {
#if defined(SNOWFLAKE_CPU_COUNTER)
  read_clocksource(kernel_clocksource, sizeof kernel_clocksource);
  counter_hz = cpu_counter_hz();
  use_tsc = counter_is_kernel_clock(kernel_clocksource, counter_hz);
  if (use_tsc) tsc_mono = TscMono(counter_hz);
#endif
}

// A DEBUG1 message (snowflake_status() sends it): which clock this backend's IDs read. A
// counter whose detection or read is broken falls back to clock_gettime() without an error;
// this says so.
void report_clock_source() {
  if (!message_level_is_interesting(DEBUG1)) return;
#if defined(SNOWFLAKE_CPU_COUNTER)
#if defined(__aarch64__)
  const char *counter =
      psprintf("CNTVCT_EL0 at %llu Hz", static_cast<unsigned long long>(counter_hz));
#else
  const char *counter = "the time-stamp counter";
#endif
  if (use_tsc && tsc_mono.calibrated())
    ereport(DEBUG1,
            (errmsg_internal(
                "snowflake: this backend's IDs read the CPU's counter (%s), calibrated", counter)));
  else if (use_tsc)
    ereport(DEBUG1, (errmsg_internal("snowflake: this backend's IDs read clock_gettime() until "
                                     "the CPU's counter (%s) is calibrated against it",
                                     counter)));
  else
    ereport(DEBUG1,
            (errmsg_internal("snowflake: this backend's IDs read clock_gettime(): the kernel's "
                             "clocksource is \"%.*s\", not the CPU's counter (%s)",
                             static_cast<int>(std::strcspn(kernel_clocksource, "\n")),
                             kernel_clocksource, counter)));
#else
  ereport(DEBUG1, (errmsg_internal("snowflake: this backend's IDs read clock_gettime(): no CPU "
                                   "counter is read on this architecture")));
#endif
}

void report_clock_event(const ClockTick &tick) {
  const double step_s = static_cast<double>(tick.step_ns) / 1e9;
  if (tick.event == ClockEvent::kStepBack)
    ereport(WARNING,
            (errmsg("system clock stepped back: it is %.3f s behind the time of IDs", step_s),
             errdetail("IDs keep their time, which advances at real-time rate, ahead of the "
                       "system clock by that much until the clock is stepped forward again.")));
  else
    ereport(WARNING, (errmsg("system clock stepped forward by %.3f s", step_s),
                      errdetail("IDs follow the new time.")));
}

void raise_before_epoch(int64_t unix_ms) {
  ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                  errmsg("system clock is before snowflake.epoch"),
                  errdetail("The clock reads %lld ms since 1970, the epoch is %lld ms.",
                            static_cast<long long>(unix_ms), static_cast<long long>(epoch_ms))));
  pg_unreachable();
}

uint32 named_wait_event(const char *name, uint32 *cache) {
#ifdef SNOWFLAKE_NAMED_WAIT_EVENTS
  if (*cache == 0) *cache = WaitEventExtensionNew(name);
  return *cache;
#else
  (void)name;
  (void)cache;
  return PG_WAIT_EXTENSION;
#endif
}

// A wait at snowflake.max_lead.
static uint32 max_lead_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeMaxLead", &event);
}

// A wait behind a block in line (core/block_line.hpp).
static uint32 block_line_wait_event() {
  static uint32 event = 0;
  return named_wait_event("SnowflakeBlockLine", &event);
}

static void wait_ms(uint64_t ms, uint32 event) {
  const long timeout = ms > 1000 ? 1000 : static_cast<long>(ms);
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout, event);
  ResetLatch(MyLatch);
  CHECK_FOR_INTERRUPTS();
}

void wait_for_clock(uint64_t ms) { wait_ms(ms, max_lead_wait_event()); }

void wait_in_line(uint64_t ms) { wait_ms(ms, block_line_wait_event()); }

}  // namespace snowflake::glue
