// snowflake_observe(): causal order across servers. An ID seen from elsewhere raises the
// floor of this server's ID clock past its millisecond (clock.hpp's clock_observe), so that
// every ID issued here afterwards, of every kind and shard, is above it; and the durable
// reservation is made to cover it, so that this holds after a restart too.
#include "glue.hpp"

extern "C" {
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

[[noreturn]] pg_noinline void raise_too_far(const char *kind, uint64_t observed_unix_ms, int64_t clock_ns) {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("observed %s is %lld ms ahead of this server's clock", kind,
                  static_cast<long long>(static_cast<int64_t>(observed_unix_ms) -
                                         clock_ns / 1000000)),
           errdetail("snowflake.max_clock_offset allows %d ms. The ID was not observed, and no "
                     "ID of this server moved.",
                     max_clock_offset_ms),
           errhint("Check the clocks of both servers; if the offset between them is real, raise "
                   "snowflake.max_clock_offset.")));
  pg_unreachable();
}

void observe(ClockState &clock, Reservation *r, uint64_t observed_unix_ms, const char *kind) {
  const uint64_t tick_ms = clock_now_unix_ms(clock);
  // The common case: the ID is in the past here, and already covered on disk.
  if (tick_ms > observed_unix_ms &&
      (r == nullptr || r->reserved_unix_ms.load(std::memory_order_acquire) > observed_unix_ms))
    return;
  const int64_t clock_ns = clock_unfloored(clock, read_clock(CLOCK_MONOTONIC));
  const Observed o =
      clock_observe(clock, static_cast<int64_t>(tick_ms) * 1000000, clock_ns,
                    static_cast<int64_t>(observed_unix_ms), int64_t{max_clock_offset_ms});
  if (o == Observed::kTooFarAhead) raise_too_far(kind, observed_unix_ms, clock_ns);
  if (r == nullptr) return;  // not preloaded: this backend's own clock, nothing durable
  if (o == Observed::kRaised) r->observed_moves.fetch_add(1, std::memory_order_relaxed);
  Reservation::raise(r->observed_unix_ms, observed_unix_ms);
  if (r->reserved_unix_ms.load(std::memory_order_acquire) <= observed_unix_ms)
    await_reservation(observed_unix_ms);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_observe) {
  const uint64_t id = checked_id(PG_GETARG_INT64(0));
  SharedState &state = generating_state();
  observe(state.clock, &state.reservation, unpack(id).ms + static_cast<uint64_t>(epoch_ms),
          "snowflake ID");
  PG_RETURN_VOID();
}

SNOWFLAKE_FUNCTION(snowflake_observe_uuid) {
  const pg_uuid_t *u = PG_GETARG_UUID_P(0);
  if (uuid_version(u->data) != 7)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("only a version 7 UUID can be observed"),
                    errdetail("Other versions hold no time, or not in their first 48 bits.")));
  const Sources128 src = sources128();
  observe(src.clock, src.reservation, uuid_unix_ms(u->data), "UUIDv7");
  PG_RETURN_VOID();
}

SNOWFLAKE_FUNCTION(snowflake_observe_ulid) {
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(0)));
  const Sources128 src = sources128();
  observe(src.clock, src.reservation, uuid_unix_ms(bytes), "ULID");
  PG_RETURN_VOID();
}
