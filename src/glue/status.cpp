// snowflake_status(): what operators alert on — per active stream its last value's time and
// sequence and its lead over the clock, the clock steps seen, the waits at the lead bound,
// and the durable reservation.
#include "glue.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

constexpr int kColumns = 15;

struct Row {
  const char *kind;
  int32 shard;  // -1: none
  uint64_t last_unix_ms;
  int64 last_seq;  // -1: none
};

void put_row(ReturnSetInfo *rsinfo, const SharedState &state, const Row &row, uint64_t now_ms) {
  Datum values[kColumns];
  bool nulls[kColumns] = {};
  values[0] = CStringGetTextDatum(row.kind);
  values[1] = Int32GetDatum(row.shard);
  nulls[1] = row.shard < 0;
  values[2] = TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(row.last_unix_ms)));
  values[3] = Int64GetDatum(row.last_seq);
  nulls[3] = row.last_seq < 0;
  values[4] = Int64GetDatum(static_cast<int64>(row.last_unix_ms) - static_cast<int64>(now_ms));
  values[5] = Int64GetDatum(static_cast<int64>(state.clock.steps_back.load()));
  values[6] = Int64GetDatum(static_cast<int64>(state.clock.steps_forward.load()));
  values[7] = Int64GetDatum(static_cast<int64>(state.reservation.lead_waits.load()));
  const uint64_t reserved = state.reservation.reserved_unix_ms.load();
  values[8] = TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(reserved)));
  nulls[8] = reserved == 0;  // nothing reserved yet
  values[9] = Int64GetDatum(static_cast<int64>(state.reservation.writes.load()));
  values[10] = Int64GetDatum(static_cast<int64>(state.reservation.waits.load()));
  values[11] = Int64GetDatum(static_cast<int64>(state.reservation.write_failures.load()));
  const uint64_t replayed = state.reservation.replayed_unix_ms.load();
  values[12] = TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(replayed)));
  nulls[12] = replayed == 0;  // no reservation replayed from WAL since start
  values[13] = Int64GetDatum(static_cast<int64>(state.reservation.observed_moves.load()));
  const uint64_t observed = state.reservation.observed_unix_ms.load();
  values[14] = TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(observed)));
  nulls[14] = observed == 0;  // no observed ID moved the clock since start
  tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_status) {
  SharedState &state = require_shared();
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
  const uint64_t now_ms = clock_now_unix_ms(state.clock);

  for (uint32_t shard = 0; shard < kShardCount; ++shard) {
    const uint64_t last = state.shards[shard].last.load(std::memory_order_relaxed);
    if (last == 0) continue;
    put_row(rsinfo, state,
            Row{"snowflake", static_cast<int32>(shard),
                (last >> kSeqBits) + static_cast<uint64_t>(epoch_ms),
                static_cast<int64>(last & kMaxSeq)},
            now_ms);
  }
  const uint64_t uuid = state.streams.uuid.last.load(std::memory_order_relaxed);
  if (uuid != 0)
    put_row(rsinfo, state,
            Row{"uuidv7", -1, uuid >> kUuidCounterBits,
                static_cast<int64>(uuid & ((1u << kUuidCounterBits) - 1))},
            now_ms);
  const uint64_t ulid_hi = state.streams.ulid.hi.load(std::memory_order_relaxed);
  if (ulid_hi != 0)
    put_row(rsinfo, state, Row{"ulid", -1, ulid_hi >> (kUlidRandomBits - 64), -1}, now_ms);
  return (Datum)0;
}
