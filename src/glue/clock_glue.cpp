// The system clocks, clock-step WARNINGs, and waits at the lead bound.
#include "glue.hpp"

extern "C" {
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
}

namespace snowflake::glue {

LocalClock local_clock;

void report_clock_event(const ClockTick &tick) {
  const double step_s = static_cast<double>(tick.step_ns) / 1e9;
  if (tick.event == ClockEvent::kStepBack)
    ereport(WARNING,
            (errmsg("system clock stepped back by %.3f s", step_s),
             errdetail("IDs keep their time, which advances at real-time rate and is now ahead "
                       "of the system clock until it catches up.")));
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

void wait_for_clock(uint64_t ms) {
  const long timeout = ms > 1000 ? 1000 : static_cast<long>(ms);
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
                  PG_WAIT_EXTENSION);
  ResetLatch(MyLatch);
  CHECK_FOR_INTERRUPTS();
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
