// Timestamps: milliseconds since the Unix epoch <-> timestamptz (timestamps.cpp).
#pragma once

#include "glue/pg.hpp"

extern "C" {
#include "utils/timestamp.h"
}

namespace snowflake::glue {

constexpr int64_t kUnixToPgEpochMs =
    int64_t{POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE} * SECS_PER_DAY * 1000;

inline TimestampTz unix_ms_to_timestamptz(int64_t unix_ms) {
  return (unix_ms - kUnixToPgEpochMs) * 1000;
}

// Floor of a finite timestamptz in Unix milliseconds; ERROR for infinity.
int64_t timestamptz_to_unix_ms(TimestampTz ts);

// The Unix second a timestamptz falls in (rounded down, before 1970 too).
inline int64_t timestamptz_to_unix_s(TimestampTz ts) {
  const int64_t ms = timestamptz_to_unix_ms(ts);
  return ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
}

// The same, checked to fit 48 bits (UUIDv7 and ULID): 1970 to the year 10889.
uint64_t timestamptz_to_unix_ms48(TimestampTz ts);

}  // namespace snowflake::glue
