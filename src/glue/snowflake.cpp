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

// The range of shards snowflake() issues on: snowflake.shard_id and shard_count, or the range
// leased. cursor keeps this backend's IDs of a range increasing (generator.hpp's
// next_in_range); it belongs to the range of cursor_word (a lease word, or the configured range).
RangeCursor range_cursor;
uint64_t cursor_word = 0;

inline uint64_t config_range_word(uint32_t first, uint32_t count) {
  return lease_word(0, first, count);
}

// The range's cursor, reset when the range changed (a new lease, a reload).
RangeCursor &cursor_for(uint64_t word) {
  if (unlikely(word != cursor_word)) {
    range_cursor = RangeCursor{};
    cursor_word = word;
  }
  return range_cursor;
}

// One snowflake ID (core/issue_loop.hpp's kind): of shard (snowflake(shard)), or with shard -1
// of the server's range, first and count shards (config mode; in lease mode the range leased).
struct SnowflakeKind {
  SharedState &state;
  int32 shard;
  uint32_t first, count;
  uint32_t issued_shard = 0;

  uint64_t origin_unix_ms() const { return static_cast<uint64_t>(epoch_ms); }
  [[noreturn]] void raise_before_origin(uint64_t unix_ms) {
    raise_before_epoch(static_cast<int64_t>(unix_ms));
  }
  [[noreturn]] void raise_exhausted(const IssueStep &) { glue::raise_exhausted("snowflake"); }

  IssueStep step(const IssueInput &in) {
    const uint64_t epoch = origin_unix_ms();
    uint64_t word = config_range_word(first, count);
    if (in.lease_word != 0) {
      word = in.lease_word;
      first = lease_word_first(word);
      count = lease_word_count(word);
      if (shard >= 0 &&
          (static_cast<uint32_t>(shard) < first || static_cast<uint32_t>(shard) >= first + count))
        raise_shard_not_leased(shard, word);
    }
    // A block that waited in line long enough has these shards to itself (block_line.hpp).
    if (unlikely(state.line.singles_paused(shard >= 0 ? shard_span(static_cast<uint32_t>(shard), 1)
                                                      : shard_span(first, count))))
      return IssueStep{Step::kInLine, 1, 0};
    const Limits limits{static_cast<uint64_t>(max_lead_ms), kMaxTimeMs,
                        limit_since(in.limit_unix_ms, epoch)};
    const uint64_t now_ms = in.now_unix_ms - epoch;
    if (shard >= 0 || count == 1) {
      issued_shard = shard >= 0 ? static_cast<uint32_t>(shard) : first;
      const NextResult r = next_state<kSeqBits>(state.shards[issued_shard].last, now_ms, limits);
      return unix_step(r.step, r.value, r.value >> kSeqBits, epoch);
    }
    ShardSlot *slots = &state.shards[first];
    const RangeResult r = next_in_range<kSeqBits>(slots, count, slots[0].range_floor_ms,
                                                  cursor_for(word), now_ms, limits);
    issued_shard = first + r.shard;
    return unix_step(r.step, r.value, r.value >> kSeqBits, epoch);
  }
};

int64 issue(int32 shard) {
  SharedState &state = generating_state();
  uint32_t first = 0, count = 1;
  if (!lease_mode) {
    if (shard < 0) {
      check_snowflake_settings();
      first = static_cast<uint32_t>(shard_id);
      count = static_cast<uint32_t>(shard_count);
      if (first + count - 1 > kMaxShard) raise_range_too_far();
    }
  }
  IssueEnv env = IssueEnv::of(state);
  SnowflakeKind kind{state, shard, first, count};
  const IssueStep r = issue_loop(env, kind);
  return static_cast<int64>(pack(r.value >> kSeqBits, kind.issued_shard, r.value & kMaxSeq));
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
             errdetail("snowflake IDs cover %lld to %lld ms since 1970 (%s plus 40 bits of "
                       "milliseconds: the 41-bit time field's top bit is the bigint's sign "
                       "bit, always 0).",
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

// This backend's place in a range (block.cpp: a block starts above it).
RangeCursor range_place(uint64_t word, uint32_t first, uint32_t count) {
  return cursor_for(word != 0 ? word : config_range_word(first, count));
}

// A block of a range (block.cpp), taken by this backend: its next IDs of the range come after
// it, as with one shard. word is the range's (lease word, or 0 with the configured range of
// first and count); last is the block's last state word, on the range's shard index.
void note_range_block(uint64_t word, uint32_t first, uint32_t count, uint64_t last,
                      uint32_t index) {
  RangeCursor &cursor = cursor_for(word != 0 ? word : config_range_word(first, count));
  const uint64_t ms = last >> kSeqBits;
  if (ms > cursor.ms || (ms == cursor.ms && index > cursor.shard)) {
    cursor.ms = ms;
    cursor.shard = index;
  }
}

void raise_shard_range_too_far() {
  raise_range_too_far();
  pg_unreachable();
}

}  // namespace snowflake::glue

SNOWFLAKE_FUNCTION(snowflake_generate) { return Int64GetDatum(issue(-1)); }

SNOWFLAKE_FUNCTION(snowflake_generate_shard) {
  const int32 shard = PG_GETARG_INT32(0);
  if (shard < 0 || static_cast<uint32_t>(shard) > kMaxShard) raise_bad_shard(shard);
  return Int64GetDatum(issue(shard));
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
