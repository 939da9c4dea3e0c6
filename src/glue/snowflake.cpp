// SQL functions of the snowflake ID kind: generate, decode, and time-to-ID bounds.
#include "glue/snowflake.hpp"

#include "glue/system_clock.hpp"
#include "glue/streams.hpp"
#include "glue/lease_wait.hpp"
#include "glue/settings.hpp"
#include "glue/shmem.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/lsyscache.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

pg_noinline void raise_bad_shard(int32 shard) {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("shard %d is out of range", shard),
           errdetail("A shard is an integer from 0 to %u.", kMaxShard)));
}

pg_noinline void raise_range_too_far() {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("snowflake.shard_id %d with snowflake.shard_count %d reaches past shard %u",
                  shard_id, shard_count, kMaxShard),
           errhint("Lower snowflake.shard_id to at most %d.",
                   static_cast<int>(kMaxShard) - shard_count + 1)));
}

// snowflake() with snowflake.shard_count above 1: the range from shard_id as one stream
// (generator.hpp's next_in_range). The cursor keeps this backend's IDs increasing.
RangeCursor range_cursor;

int64 issue_range(uint32_t first, uint32_t count) {
  SharedState &state = generating_state();
  if (first + count - 1 > kMaxShard) raise_range_too_far();
  ShardSlot *slots = &state.shards[first];
  for (;;) {
    const Limits limits =
        stream_limits(&state.reservation, kMaxTimeMs, static_cast<uint64_t>(epoch_ms));
    const uint64_t now_ms = clock_now_ms(state.clock);
    const RangeResult r = next_in_range<kSeqBits>(slots, count, slots[0].range_floor_ms,
                                                  range_cursor, now_ms, limits);
    if (likely(r.step == Step::kIssued)) {
      after_issue(&state.reservation, (r.value >> kSeqBits) + static_cast<uint64_t>(epoch_ms),
                  now_ms + static_cast<uint64_t>(epoch_ms));
      return static_cast<int64>(pack(r.value >> kSeqBits, first + r.shard, r.value & kMaxSeq));
    }
    settle(r.step, r.step == Step::kReserve ? r.value + static_cast<uint64_t>(epoch_ms) : r.value,
           &state.reservation, "snowflake");
  }
}

int64 issue(uint32_t shard) {
  SharedState &state = generating_state();
  std::atomic<uint64_t> &slot = state.shards[shard].last;
  for (;;) {
    const Limits limits =
        stream_limits(&state.reservation, kMaxTimeMs, static_cast<uint64_t>(epoch_ms));
    const uint64_t now_ms = clock_now_ms(state.clock);
    const NextResult r = next_state<kSeqBits>(slot, now_ms, limits);
    if (likely(r.step == Step::kIssued)) {
      after_issue(&state.reservation, (r.value >> kSeqBits) + static_cast<uint64_t>(epoch_ms),
                  now_ms + static_cast<uint64_t>(epoch_ms));
      return static_cast<int64>(pack(r.value >> kSeqBits, shard, r.value & kMaxSeq));
    }
    settle(r.step, r.step == Step::kReserve ? r.value + static_cast<uint64_t>(epoch_ms) : r.value,
           &state.reservation, "snowflake");
  }
}

// Lease mode: the range the lease holds, read before issuing and checked again after it
// (core/lease.hpp's LeaseSlot): a value issued while the lease closed or changed is dropped, never
// returned. Its limit is the lower of the reservation and the mark stored in etcd. shard is
// snowflake(shard)'s, or -1 for the range.
uint64_t leased_word = 0;  // the lease this backend's range cursor belongs to

// The IDs' clock for a leased ID, in ms since the epoch, and its monotonic reading; false
// after reporting a clock step. The WARNING goes out before a new reading is taken, never
// between the reading and the check after the swap: a client that does not read its socket
// would hold the backend there, past the deadline the reading is checked against.
bool leased_clock(ClockState &clock, uint64_t *now_ms, int64_t *mono) {
  const ClockTick tick = clock_now(
      clock, local_clock, [] { return read_mono_fast(); },
      [] { return read_clock(CLOCK_MONOTONIC); }, [] { return read_clock(CLOCK_REALTIME); });
  if (unlikely(tick.event != ClockEvent::kNone)) {
    report_clock_event(tick);
    return false;
  }
  const int64_t unix_ms = tick.unix_ns / 1000000;
  if (unlikely(unix_ms < epoch_ms)) raise_before_epoch(unix_ms);
  *now_ms = static_cast<uint64_t>(unix_ms - epoch_ms);
  *mono = tick.mono_ns;
  return true;
}

int64 issue_leased(int32 shard) {
  SharedState &state = generating_state();
  LeaseSlot &lease = state.lease;
  const uint64_t epoch = static_cast<uint64_t>(epoch_ms);
  for (;;) {
    const uint64_t word = lease.word.load(std::memory_order_seq_cst);
    // The clock's own monotonic reading serves the lease's checks: no second reading per ID.
    int64_t mono;
    uint64_t now_ms;
    if (unlikely(!leased_clock(state.clock, &now_ms, &mono))) continue;
    if (unlikely(word == 0 || !(mono < lease.deadline_mono_ns.load(std::memory_order_seq_cst)))) {
      await_lease(lease);
      continue;
    }
    const uint32_t first = lease_word_first(word), count = lease_word_count(word);
    if (shard >= 0 &&
        (static_cast<uint32_t>(shard) < first || static_cast<uint32_t>(shard) >= first + count))
      raise_shard_not_leased(shard, word);
    if (unlikely(word != leased_word)) {
      range_cursor = RangeCursor{};
      leased_word = word;
    }
    Limits limits = stream_limits(&state.reservation, kMaxTimeMs, epoch);
    const uint64_t mark = lease.mark_unix_ms.load(std::memory_order_acquire);
    limits.reserved_ms = std::min(limits.reserved_ms, mark > epoch ? mark - epoch : 0);
    uint64_t value;
    uint32_t issued_shard;
    Step step;
    if (shard >= 0 || count == 1) {
      issued_shard = shard >= 0 ? static_cast<uint32_t>(shard) : first;
      const NextResult r = next_state<kSeqBits>(state.shards[issued_shard].last, now_ms, limits);
      step = r.step;
      value = r.value;
    } else {
      ShardSlot *slots = &state.shards[first];
      const RangeResult r = next_in_range<kSeqBits>(slots, count, slots[0].range_floor_ms,
                                                    range_cursor, now_ms, limits);
      step = r.step;
      value = r.value;
      issued_shard = first + r.shard;
    }
    if (likely(step == Step::kIssued)) {
      // Checked again after the compare-and-swap: a lease closed or changed meanwhile drops
      // the value. (Against the reading taken before the swap, a few instructions earlier:
      // only a backend stalled for over lease_ttl - lease_fail_after right there could issue
      // after the deadline, and the mark still keeps its ID unique.)
      if (unlikely(lease.word.load(std::memory_order_seq_cst) != word ||
                   !(mono < lease.deadline_mono_ns.load(std::memory_order_seq_cst))))
        continue;
      after_issue(&state.reservation, (value >> kSeqBits) + epoch, now_ms + epoch);
      return static_cast<int64>(pack(value >> kSeqBits, issued_shard, value & kMaxSeq));
    }
    if (step == Step::kReserve)
      await_lease_cover(state, value + epoch);
    else
      settle(step, value, &state.reservation, "snowflake");
  }
}

// A decoder that reads snowflake.epoch, after it changed (the server refuses to generate,
// kEpochChanged): the stored IDs count from the old epoch, so the time it would give is wrong.
pg_noinline void raise_decode_epoch_changed(const char *call, const char *fix) {
  const long long stored = static_cast<long long>(shared->reservation.file_epoch_ms.load());
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("snowflake.epoch is %lld, but IDs were issued with %lld",
                  static_cast<long long>(epoch_ms), stored),
           errdetail("%s reads snowflake.epoch: the time it gives for stored IDs would be wrong "
                     "by %lld ms.",
                     call, static_cast<long long>(epoch_ms) - stored),
           errhint("Set snowflake.epoch back to %lld and restart the server, or give the epoch "
                   "as an argument: %s with epoch => to_timestamp(%lld / 1000.0).",
                   stored, fix, stored)));
}

inline void check_decode_epoch(const char *call, const char *fix) {
  if (unlikely(shared != nullptr &&
               shared->reservation.refusal.load(std::memory_order_relaxed) == kEpochChanged))
    raise_decode_epoch_changed(call, fix);
}

TimestampTz id_timestamp(uint64_t id, int64_t epoch = epoch_ms) {
  return unix_ms_to_timestamptz(static_cast<int64_t>(unpack(id).ms) + epoch);
}

// An epoch given as an argument, in Unix milliseconds: what snowflake.epoch accepts, as a
// timestamptz (finite, on a whole millisecond, 1970-01-01 to 2100-01-01 UTC).
int64_t checked_epoch(TimestampTz epoch) {
  if (TIMESTAMP_NOT_FINITE(epoch) || epoch % 1000 != 0 || epoch < unix_ms_to_timestamptz(0) ||
      epoch > unix_ms_to_timestamptz(kMaxEpochMs))
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("epoch is not a valid snowflake epoch"),
         errdetail("An epoch is a finite time on a whole millisecond, from 1970-01-01 to "
                   "2100-01-01 00:00:00 UTC, as snowflake.epoch.")));
  return timestamptz_to_unix_ms(epoch);
}

// The smallest ID of the millisecond that holds ts (shard 0, sequence 0); source names where
// the epoch came from, for the message.
int64 id_at(TimestampTz ts, int64_t epoch, const char *source) {
  const int64_t unix_ms = timestamptz_to_unix_ms(ts);
  const int64_t ms = unix_ms - epoch;
  if (ms < 0 || static_cast<uint64_t>(ms) > kMaxTimeMs)
    ereport(ERROR,
            (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
             errmsg("timestamp is outside the range of snowflake IDs"),
             errdetail("snowflake IDs cover %lld to %lld ms since 1970 (%s plus "
                       "41 bits of milliseconds).",
                       static_cast<long long>(epoch),
                       static_cast<long long>(epoch + static_cast<int64_t>(kMaxTimeMs)), source)));
  return static_cast<int64>(pack(static_cast<uint64_t>(ms), 0, 0));
}

}  // namespace

namespace snowflake::glue {

void raise_negative_id(int64 id, const char *kind) {
  ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                  errmsg("%s ID %lld is negative", kind, static_cast<long long>(id)),
                  errdetail("%s IDs are positive bigints.", kind)));
  pg_unreachable();
}

Datum out_record(FunctionCallInfo fcinfo, const Datum *values, int count) {
  TupleDesc desc;
  if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s must be called in a context that accepts a record",
                           get_func_name(fcinfo->flinfo->fn_oid))));
  bool nulls[8] = {};
  if (desc->natts != count || count > static_cast<int>(lengthof(nulls)))
    elog(ERROR, "%s returns %d columns, not %d", get_func_name(fcinfo->flinfo->fn_oid), desc->natts,
         count);
  desc = BlessTupleDesc(desc);
  return HeapTupleGetDatum(heap_form_tuple(desc, const_cast<Datum *>(values), nulls));
}

// For the blocks (block.cpp), which take from the same streams, and sno() in lease mode.
bool leased_clock_now(ClockState &clock, uint64_t *now_ms, int64_t *mono) {
  return leased_clock(clock, now_ms, mono);
}

void raise_shard_range_too_far() {
  raise_range_too_far();
  pg_unreachable();
}

}  // namespace snowflake::glue

SNOWFLAKE_FUNCTION(snowflake_generate) {
  if (unlikely(lease_mode)) return Int64GetDatum(issue_leased(-1));
  check_snowflake_settings();
  if (shard_count > 1)
    return Int64GetDatum(
        issue_range(static_cast<uint32_t>(shard_id), static_cast<uint32_t>(shard_count)));
  return Int64GetDatum(issue(static_cast<uint32_t>(shard_id)));
}

SNOWFLAKE_FUNCTION(snowflake_generate_shard) {
  const int32 shard = PG_GETARG_INT32(0);
  if (shard < 0 || static_cast<uint32_t>(shard) > kMaxShard) raise_bad_shard(shard);
  if (unlikely(lease_mode)) return Int64GetDatum(issue_leased(shard));
  return Int64GetDatum(issue(static_cast<uint32_t>(shard)));
}

SNOWFLAKE_FUNCTION(snowflake_timestamp) {
  check_decode_epoch("snowflake_timestamp(id)", "snowflake_timestamp(id, epoch)");
  return TimestampTzGetDatum(id_timestamp(checked_id(PG_GETARG_INT64(0))));
}

SNOWFLAKE_FUNCTION(snowflake_shard) {
  return Int32GetDatum(static_cast<int32>(unpack(checked_id(PG_GETARG_INT64(0))).shard));
}

SNOWFLAKE_FUNCTION(snowflake_seq) {
  return Int32GetDatum(static_cast<int32>(unpack(checked_id(PG_GETARG_INT64(0))).seq));
}

SNOWFLAKE_FUNCTION(snowflake_decode) {
  check_decode_epoch("snowflake_decode(id)", "snowflake_timestamp(id, epoch)");
  const uint64_t id = checked_id(PG_GETARG_INT64(0));
  const Decoded d = unpack(id);
  const Datum values[3] = {TimestampTzGetDatum(id_timestamp(id)),
                           Int32GetDatum(static_cast<int32>(d.shard)),
                           Int32GetDatum(static_cast<int32>(d.seq))};
  return out_record(fcinfo, values, 3);
}

SNOWFLAKE_FUNCTION(snowflake_at) {
  check_decode_epoch("snowflake_at(ts)", "snowflake_at(ts, epoch)");
  return Int64GetDatum(id_at(PG_GETARG_TIMESTAMPTZ(0), epoch_ms, "snowflake.epoch"));
}

// The forms with the epoch as an argument read no setting: IMMUTABLE, so that partition
// keys, partition pruning at plan time and expression indexes can use them.
SNOWFLAKE_FUNCTION(snowflake_timestamp_epoch) {
  const uint64_t id = checked_id(PG_GETARG_INT64(0));
  return TimestampTzGetDatum(id_timestamp(id, checked_epoch(PG_GETARG_TIMESTAMPTZ(1))));
}

SNOWFLAKE_FUNCTION(snowflake_at_epoch) {
  const int64_t epoch = checked_epoch(PG_GETARG_TIMESTAMPTZ(1));
  return Int64GetDatum(id_at(PG_GETARG_TIMESTAMPTZ(0), epoch, "the epoch"));
}
