// Timestamps to Unix milliseconds, refused where no ID can hold them.
#include "glue/timestamps.hpp"

namespace snowflake::glue {

uint64_t timestamptz_to_unix_ms48(TimestampTz ts) {
  const int64_t ms = timestamptz_to_unix_ms(ts);
  if (ms < 0 || static_cast<uint64_t>(ms) > kMaxUnixMs48)
    ereport(ERROR,
            (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
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
