// SQL functions of the UUIDv7 kind, on PostgreSQL's own uuid type.
#include "core/id128.hpp"

#include "glue/system_clock.hpp"
#include "glue/streams.hpp"
#include "glue/random.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

Datum uuid_datum(const uint8_t bytes[16]) {
  pg_uuid_t *u = static_cast<pg_uuid_t *>(palloc(sizeof(pg_uuid_t)));
  std::memcpy(u->data, bytes, UUID_LEN);
  return UUIDPGetDatum(u);
}

}  // namespace

// The server's UUIDv7 stream (core/issue_loop.hpp's kind): a 12-bit counter under each
// millisecond, no shard and no lease.
struct Uuidv7Kind {
  Streams128 &streams;

  uint64_t origin_unix_ms() const { return 0; }
  [[noreturn]] void raise_before_origin(uint64_t) { pg_unreachable(); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { glue::raise_exhausted("uuidv7"); }

  IssueStep step(const IssueInput &in) {
    const NextResult r = next_state<kUuidCounterBits>(
        streams.uuid.last, in.now_unix_ms,
        Limits{static_cast<uint64_t>(max_lead_ms), kMaxUnixMs48, in.limit_unix_ms});
    return unix_step(r.step, r.value, r.value >> kUuidCounterBits, 0);
  }
};

SNOWFLAKE_FUNCTION(snowflake_uuidv7) {
  const Sources128 src = sources128();
  const uint64_t rand_b = random_u64();
  IssueEnv env(src.clock, src.reservation, nullptr);
  Uuidv7Kind kind{src.streams};
  const uint64_t value = issue_loop(env, kind).value;
  uint8_t bytes[16];
  uuidv7_compose(bytes, value >> kUuidCounterBits,
                 static_cast<uint32_t>(value & ((1u << kUuidCounterBits) - 1)), rand_b);
  return uuid_datum(bytes);
}

SNOWFLAKE_FUNCTION(uuidv7_from_time) {
  const uint64_t ms = timestamptz_to_unix_ms48(PG_GETARG_TIMESTAMPTZ(0));
  const uint64_t rand_a = random_u64();
  uint8_t bytes[16];
  uuidv7_compose(bytes, ms, static_cast<uint32_t>(rand_a), random_u64());
  return uuid_datum(bytes);
}

// Like core's uuidv7(interval) (PostgreSQL 18): the IDs' clock shifted by an interval, with
// months and days counted in the session's time zone as timestamptz + interval does. A shifted
// value is random below the millisecond and leaves the server-wide stream alone, so that
// a value far ahead cannot hold back the values of everyone else.
SNOWFLAKE_FUNCTION(snowflake_uuidv7_shift) {
  const Sources128 src = sources128();
  const TimestampTz now =
      unix_ms_to_timestamptz(static_cast<int64_t>(clock_now_unix_ms(src.clock)));
  const TimestampTz shifted = DatumGetTimestampTz(
      DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(now), PG_GETARG_DATUM(0)));
  const uint64_t ms = timestamptz_to_unix_ms48(shifted);
  const uint64_t rand_a = random_u64();
  uint8_t bytes[16];
  uuidv7_compose(bytes, ms, static_cast<uint32_t>(rand_a), random_u64());
  return uuid_datum(bytes);
}

SNOWFLAKE_FUNCTION(uuidv7_at) {
  uint8_t bytes[16];
  uuidv7_compose(bytes, timestamptz_to_unix_ms48(PG_GETARG_TIMESTAMPTZ(0)), 0, 0);
  return uuid_datum(bytes);
}

SNOWFLAKE_FUNCTION(uuidv7_timestamp) {
  const pg_uuid_t *u = PG_GETARG_UUID_P(0);
  if (uuid_version(u->data) != 7) PG_RETURN_NULL();
  return TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(uuid_unix_ms(u->data))));
}

// Core's uuid_extract_version(uuid) and uuid_extract_timestamp(uuid) (PostgreSQL 17), for
// 15 and 16, which lack them: the install script declares them there alone. Their results are
// core's: NULL for a variant other than RFC 9562's; the timestamp of versions 1 (100 ns since
// 1582-10-15, cut to microseconds) and 7 (milliseconds), NULL for other versions.
SNOWFLAKE_FUNCTION(snowflake_uuid_extract_version) {
  const int version = uuid_version(PG_GETARG_UUID_P(0)->data);
  if (version < 0) PG_RETURN_NULL();
  PG_RETURN_INT16(static_cast<int16>(version));
}

SNOWFLAKE_FUNCTION(snowflake_uuid_extract_timestamp) {
  const uint8_t *u = PG_GETARG_UUID_P(0)->data;
  const int version = uuid_version(u);
  if (version == 7)
    return TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(uuid_unix_ms(u))));
  if (version != 1) PG_RETURN_NULL();
  // time_low, time_mid, then time_high's 12 bits beside the version
  const uint64_t ticks = (uint64_t{u[0]} << 24) | (uint64_t{u[1]} << 16) | (uint64_t{u[2]} << 8) |
                         uint64_t{u[3]} | (uint64_t{u[4]} << 40) | (uint64_t{u[5]} << 32) |
                         (uint64_t{u[6] & 0x0fu} << 56) | (uint64_t{u[7]} << 48);
  constexpr int64_t kGregorianJdate = 2299161;  // 1582-10-15, the version 1 epoch
  constexpr int64_t kGregorianToPgUs =
      (int64_t{POSTGRES_EPOCH_JDATE} - kGregorianJdate) * SECS_PER_DAY * USECS_PER_SEC;
  return TimestampTzGetDatum(static_cast<TimestampTz>(ticks / 10) - kGregorianToPgUs);
}
