// What operators alert on. snowflake_status(): one row, always (a primary before its first
// ID, a standby, a server whose writes fail): whether it generates and why not, the clock's
// gap over the system clock and its steps, the durable reservation, its writer and what it
// replayed, and observed IDs. snowflake_streams(): a row per stream that issued a value since
// start (snowflake shards, uuidv7, ulid, sno, rsxid, ksuid), with its last value and its lead over
// the system clock.
#include <cerrno>

#include "core/lease.hpp"
#include "core/mask.hpp"
#include "core/second_stream.hpp"
#include "core/sno_stream.hpp"

#include "glue/system_clock.hpp"
#include "glue/lease_wait.hpp"
#include "glue/mask_keys.hpp"
#include "glue/reservation.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc_tables.h"
#include "utils/tuplestore.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

constexpr int kStatusColumns = 36;
constexpr int kStreamColumns = 7;

int64_t system_clock_ms() { return read_clock(CLOCK_REALTIME) / 1000000; }

// A time in Unix ms as timestamptz, NULL for 0 (none yet).
void put_time(Datum *values, bool *nulls, int i, uint64_t unix_ms) {
  values[i] = TimestampTzGetDatum(unix_ms_to_timestamptz(static_cast<int64_t>(unix_ms)));
  nulls[i] = unix_ms == 0;
}

void put_count(Datum *values, int i, uint64_t n) {
  values[i] = Int64GetDatum(static_cast<int64>(n));
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_status) {
  SharedState &state = require_shared();
  const Reservation &r = state.reservation;
  report_clock_source();
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
  Datum values[kStatusColumns];
  bool nulls[kStatusColumns] = {};

  const bool in_recovery = RecoveryInProgress();
  values[0] = BoolGetDatum(in_recovery);
  const char *refused = generation_refused();
  if (refused == nullptr && bad_setting_name != nullptr)
    refused = psprintf("%s is \"%s\" in the configuration", bad_setting_name, bad_setting_value);
  // Misspelled snowflake.* names in the configuration files: on the default shard, they stop
  // the IDs that carry a shard (check_snowflake_settings).
  const UnknownSettings unknown = unknown_settings();
  if (refused == nullptr && unknown.names != nullptr && !lease_mode &&
      shard_id_source() == PGC_S_DEFAULT)
    refused =
        psprintf("unrecognized configuration parameter in the configuration: %s", unknown.names);
  if (refused == nullptr && in_recovery) refused = "the server is in recovery";
  if (refused == nullptr) refused = lease_refusal();
  values[1] = refused != nullptr ? CStringGetTextDatum(refused) : Datum(0);
  nulls[1] = refused == nullptr;
  // The IDs' clock as it stands (peeked: a monitoring query takes no part in step detection)
  // against the system clock.
  const int64_t ids_ns = clock_peek(state.clock, read_clock(CLOCK_MONOTONIC));
  values[2] = Int64GetDatum(ids_ns == kClockUnset ? 0 : ids_ns / 1000000 - system_clock_ms());
  put_count(values, 3, state.clock.steps_back.load());
  put_count(values, 4, state.clock.steps_forward.load());
  put_count(values, 5, r.lead_waits.load());
  put_time(values, nulls, 6, r.reserved_unix_ms.load());
  put_count(values, 7, r.writes.load());
  put_count(values, 8, r.waits.load());
  put_count(values, 9, r.write_failures.load());
  const int err = r.write_errno.load();
  if (err != 0) {
    errno = err;
    values[10] = CStringGetTextDatum(psprintf(
        "could not write the snowflake reservation file \"snowflake.reservation.tmp\": %m"));
  }
  nulls[10] = err == 0;
  put_time(values, nulls, 11, r.replayed_unix_ms.load());
  const int pid = r.writer_pid.load();
  values[12] = Int32GetDatum(pid);
  nulls[12] = pid == 0;
  const uint64_t busy_since = r.busy_since_mono_ms.load();
  values[13] = Int64GetDatum(static_cast<int64>(monotonic_ms()) - static_cast<int64>(busy_since));
  nulls[13] = busy_since == 0;
  put_count(values, 14, r.observed_moves.load());
  put_time(values, nulls, 15, r.observed_unix_ms.load());
  put_count(values, 16, r.observe_skipped.load());
  put_count(values, 17, r.shard_collisions.load());
  // This session's shard range, and where snowflake.shard_id came from ("default": set
  // nowhere, so on the shard every server defaults to).
  values[18] = Int32GetDatum(shard_id);
  values[19] = Int32GetDatum(shard_count);
  values[20] = CStringGetTextDatum(GucSource_Names[shard_id_source()]);
  // Lease mode: where the shards come from, the lease, and what etcd last said.
  const LeaseSlot &lease = state.lease;
  values[21] = CStringGetTextDatum(lease_mode ? "etcd" : "config");
  const int64_t mono = read_clock(CLOCK_MONOTONIC);
  values[22] = CStringGetTextDatum(lease_state_name(lease.state_at(mono)));
  const uint64_t word = lease.word.load();
  values[23] = Int32GetDatum(static_cast<int32>(lease_word_first(word)));
  values[24] = Int32GetDatum(static_cast<int32>(lease_word_count(word)));
  nulls[23] = nulls[24] = word == 0;
  const int64_t expires = lease.expires_mono_ns.load();
  values[25] = Int64GetDatum(expires > mono ? (expires - mono) / 1000000 : 0);
  nulls[25] = expires == 0;
  char endpoint[256], error[512];
  read_lease_text(endpoint, sizeof endpoint, error, sizeof error);
  values[26] = CStringGetTextDatum(endpoint);
  nulls[26] = endpoint[0] == '\0';
  values[27] = CStringGetTextDatum(error);
  nulls[27] = error[0] == '\0';
  put_count(values, 28, lease.requests.load());
  // The mask keys: the active one's id and how many (never a key), and what is wrong.
  const int active = mask_active_key_id();
  values[29] = Int32GetDatum(active);
  nulls[29] = active < 0;
  values[30] = Int32GetDatum(mask_key_count());
  const char *problem = mask_key_problem();
  values[31] = CStringGetTextDatum(problem);
  nulls[31] = problem[0] == '\0';
  // A name of the key file's keys that tells nothing of them: equal on nodes with equal files.
  char fingerprint[17];
  nulls[32] = !mask_keys_fingerprint(fingerprint);
  values[32] = CStringGetTextDatum(fingerprint);
  // Blocks (snowflake_block) taken since start, and the IDs they held, over every shard.
  uint64_t blocks = 0, block_ids = 0;
  for (const ShardSlot &s : state.shards) {
    blocks += s.blocks.load(std::memory_order_relaxed);
    block_ids += s.block_values.load(std::memory_order_relaxed);
  }
  put_count(values, 33, blocks);
  put_count(values, 34, block_ids);
  values[35] = unknown.places != nullptr ? CStringGetTextDatum(unknown.places) : Datum(0);
  nulls[35] = unknown.places == nullptr;
  tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  return (Datum)0;
}

namespace {

// blocks and block_ids: of a snowflake shard; NULL (-1) for the other kinds, which have none.
void put_stream(ReturnSetInfo *rsinfo, const char *kind, int32 shard, uint64_t last_unix_ms,
                int64 last_seq, int64_t now_ms, int64 blocks = -1, int64 block_ids = -1) {
  Datum values[kStreamColumns];
  bool nulls[kStreamColumns] = {};
  values[0] = CStringGetTextDatum(kind);
  values[1] = Int32GetDatum(shard);
  nulls[1] = shard < 0;
  put_time(values, nulls, 2, last_unix_ms);
  values[3] = Int64GetDatum(last_seq);
  nulls[3] = last_seq < 0;
  values[4] = Int64GetDatum(static_cast<int64>(last_unix_ms) - static_cast<int64>(now_ms));
  values[5] = Int64GetDatum(blocks);
  values[6] = Int64GetDatum(block_ids);
  nulls[5] = nulls[6] = blocks < 0;
  tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_streams) {
  SharedState &state = require_shared();
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
  const int64_t now_ms = system_clock_ms();
  for (uint32_t shard = 0; shard < kShardCount; ++shard) {
    const uint64_t last = state.shards[shard].last.load(std::memory_order_relaxed);
    if (last == 0) continue;
    put_stream(
        rsinfo, "snowflake", static_cast<int32>(shard),
        (last >> kSeqBits) + static_cast<uint64_t>(epoch_ms), static_cast<int64>(last & kMaxSeq),
        now_ms, static_cast<int64>(state.shards[shard].blocks.load(std::memory_order_relaxed)),
        static_cast<int64>(state.shards[shard].block_values.load(std::memory_order_relaxed)));
  }
  const uint64_t uuid = state.streams.uuid.last.load(std::memory_order_relaxed);
  if (uuid != 0)
    put_stream(rsinfo, "uuidv7", -1, uuid >> kUuidCounterBits,
               static_cast<int64>(uuid & ((1u << kUuidCounterBits) - 1)), now_ms);
  const uint64_t ulid_hi = state.streams.ulid.hi.load(std::memory_order_relaxed);
  if (ulid_hi != 0) put_stream(rsinfo, "ulid", -1, ulid_hi >> (kUlidRandomBits - 64), -1, now_ms);
  // The kinds whose values carry a shard: a row per shard's stream (core/stream_shard.hpp),
  // with its shard. A sno stream's time is its last sno's 4 ms unit, its sequence the 16-bit
  // one; a one-second stream's time is its last value's second, its sequence the 24-bit counter.
  for (uint32_t i = 0; i < kShardStreams; ++i) {
    const uint32_t held = owner_shard_plus_one(state.streams.sno.owners[i].load());
    const uint64_t last = state.streams.sno.words[i].last.load(std::memory_order_relaxed);
    if (held != 0 && last != 0)
      put_stream(rsinfo, "sno", static_cast<int32>(held - 1),
                 static_cast<uint64_t>(sno::units_to_unix_ms(last >> sno::kSeqBits)),
                 static_cast<int64>(last & ((1u << sno::kSeqBits) - 1)), now_ms);
  }
  const struct {
    const char *kind;
    const ShardStreamsT<PgSpinLock> &streams;
    const seconds::Format &format;
  } second_streams[] = {{"rsxid", state.streams.rsxid.shards, seconds::kXid},
                        {"ksuid", state.streams.ksuid.shards, seconds::kKsuid}};
  for (const auto &s : second_streams) {
    for (uint32_t i = 0; i < kShardStreams; ++i) {
      const uint32_t held = owner_shard_plus_one(s.streams.owners[i].load());
      const uint64_t last = s.streams.words[i].last.load(std::memory_order_relaxed);
      if (held != 0 && last != 0)
        put_stream(rsinfo, s.kind, static_cast<int32>(held - 1),
                   seconds::word_high_unix_ms(last, s.format),
                   static_cast<int64>(last & seconds::kMaxCounter), now_ms);
    }
  }
  return (Datum)0;
}

SNOWFLAKE_FUNCTION(snowflake_reservation_create) {
  create_reservation();
  PG_RETURN_VOID();
}
