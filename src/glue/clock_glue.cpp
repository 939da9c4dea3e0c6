// The system clocks, clock-step WARNINGs, and waits at the lead bound.
#include "glue.hpp"

extern "C" {
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

LocalClock local_clock;
TscMono tsc_mono;
bool use_tsc = false;

// The counter is read directly only where the kernel itself keeps time by it: then it is
// invariant and the same on every CPU. Checked once per server start (or per backend when
// the library is not preloaded).
void detect_tsc() {
#if defined(__x86_64__)
  char source[32] = {};
  if (FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
    if (fgets(source, sizeof source, f) == nullptr) source[0] = '\0';
    fclose(f);
  }
  use_tsc = std::strcmp(source, "tsc\n") == 0;
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

void wait_for_clock(uint64_t ms) {
  const long timeout = ms > 1000 ? 1000 : static_cast<long>(ms);
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
                  max_lead_wait_event());
  ResetLatch(MyLatch);
  CHECK_FOR_INTERRUPTS();
}

Sources128 backend_sources128() {
  static ClockState clock;
  static Streams128 streams;
  static bool ready = false;
  if (!ready) {
    clock.init();
    streams.init();
    ready = true;
  }
  return Sources128{clock, streams, nullptr};
}

RandomStream random_stream;
int random_stream_pid = 0;

void seed_random_stream() {
  uint8_t seed[ChaCha20::kSeedBytes];
  if (!pg_strong_random(seed, sizeof seed))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate random bytes to seed the ID generator")));
  random_stream.seed(seed);
  explicit_bzero(seed, sizeof seed);
  random_stream_pid = MyProcPid;
}

void raise_exhausted(const char *kind) {
  ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                  errmsg("%s values are exhausted: the clock is past the range of the layout",
                         kind)));
  pg_unreachable();
}

uint64_t timestamptz_to_unix_ms48(TimestampTz ts) {
  const int64_t ms = timestamptz_to_unix_ms(ts);
  if (ms < 0 || static_cast<uint64_t>(ms) > kMaxUnixMs48)
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp is outside the 48-bit millisecond range of UUIDv7 and ULID"),
                    errdetail("The range is 1970-01-01 00:00:00 UTC to 10889-08-02 05:31:50.655 UTC.")));
  return static_cast<uint64_t>(ms);
}

int64_t timestamptz_to_unix_ms(TimestampTz ts) {
  if (TIMESTAMP_NOT_FINITE(ts))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp out of range: infinite timestamps have no ID")));
  // Floor division: the millisecond that contains ts.
  int64_t ms = ts / 1000;
  if (ts % 1000 < 0) --ms;
  return ms + kUnixToPgEpochMs;
}

}  // namespace snowflake::glue
