// The sno type: 10 bytes, no header; text I/O in sno's base32, binary I/O, comparison,
// hashing, sort support, casts to and from bytea, the generator and the decoders.
#include "core/sno_codec.hpp"
#include "core/sno_stream.hpp"
#include "core/stream_shard.hpp"

#include "glue/fixed_bytes.hpp"
#include "glue/lease_wait.hpp"
#include "glue/snowflake.hpp"
#include "glue/streams.hpp"
#include "glue/system_clock.hpp"
#include "glue/text_input.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

using Sno = FixedBytes<sno::kBytes>;

[[noreturn]] pg_noinline void raise_bad_meta(int32 meta) {
  ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                  errmsg("sno metabyte %d is out of range", meta),
                  errdetail("A metabyte is an integer from 0 to 255.")));
  pg_unreachable();
}

[[noreturn]] pg_noinline void raise_before_sno_epoch(uint64_t unix_ms) {
  ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                  errmsg("the clock is before the start of sno time"),
                  errdetail("The clock reads %llu ms since 1970; sno time begins at "
                            "2010-01-01 00:00:00 UTC.",
                            static_cast<unsigned long long>(unix_ms))));
  pg_unreachable();
}

// The sno streams (core/issue_loop.hpp's kind), one per partition, each for every metabyte;
// the partition is the session's shard: snowflake.shard_id (with a range of shards, its first),
// or in lease mode the first shard of the range leased.
struct SnoKind {
  SharedState &state;
  uint32_t partition;

  uint64_t origin_unix_ms() const { return static_cast<uint64_t>(sno::kEpochUnixMs); }
  [[noreturn]] void raise_before_origin(uint64_t unix_ms) { raise_before_sno_epoch(unix_ms); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { glue::raise_exhausted("sno"); }

  IssueStep step(const IssueInput &in) {
    if (in.lease_word != 0) partition = lease_word_first(in.lease_word);
    // The partition's own stream (core/stream_shard.hpp).
    const NextResult r =
        issue_for_shard(state.streams.sno, partition, [&](std::atomic<uint64_t> &last) {
          return sno::next(last, in.now_unix_ms, static_cast<uint64_t>(max_lead_ms),
                           in.limit_unix_ms);
        });
    return IssueStep{r.step, r.value,
                     r.step == Step::kIssued ? sno::word_high_unix_ms(r.value) : 0};
  }
};

Datum issue(uint8_t meta) {
  SharedState &state = generating_state();
  if (!lease_mode) check_snowflake_settings();
  IssueEnv env = IssueEnv::of(state);
  SnoKind kind{state, static_cast<uint32_t>(shard_id)};
  const IssueStep r = issue_loop(env, kind);
  uint8_t bytes[sno::kBytes];
  sno::compose_issued(r.value, meta, static_cast<uint16_t>(kind.partition), bytes);
  return Sno::datum(bytes);
}

}  // namespace

SNOWFLAKE_FUNCTION(sno_generate) {
  const int32 meta = PG_GETARG_INT32(0);
  if (unlikely(meta < 0 || meta > 255)) raise_bad_meta(meta);
  return issue(static_cast<uint8_t>(meta));
}

// sno's text, or bytea's hex text of the 10 bytes (\x and 20 hexadecimal digits): what pgx
// sends for muyo/sno's driver value, whose type it does not know.
SNOWFLAKE_FUNCTION(sno_in) {
  const char *text = PG_GETARG_CSTRING(0);
  const size_t len = std::strlen(text);
  uint8_t bytes[sno::kBytes];
  if (sno::is_hex_text(text, len)) {
    if (likely(sno::decode_hex(text, len, bytes))) return Sno::datum(bytes);
    SNOWFLAKE_ERETURN(fcinfo->context, (Datum)0,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "sno", text),
                       errdetail("A sno in bytea's hex form is \\x and %zu hexadecimal digits.",
                                 2 * sno::kBytes)));
  }
  const sno::TextParse p = sno::decode(text, len, bytes);
  if (likely(p.status == sno::TextParse::kOk)) return Sno::datum(bytes);
  // Of the wrong length in characters, its length; of 16 characters, some of more than one
  // byte, its first character outside the alphabet.
  const size_t n = chars(text, len);
  if (n != sno::kTextLen)
    SNOWFLAKE_ERETURN(fcinfo->context, (Datum)0,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "sno", text),
                       errdetail("A sno is %zu characters, not %zu.", sno::kTextLen, n)));
  char c[32];
  SNOWFLAKE_ERETURN(fcinfo->context, (Datum)0,
                    (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                     errmsg("invalid input syntax for type %s: \"%s\"", "sno", text),
                     errdetail("Character %s at position %zu is not one of 2-9 and a-x "
                               "(lower case).",
                               shown(text, len, p.position, c), chars(text, p.position) + 1)));
}

SNOWFLAKE_FUNCTION(sno_out) {
  char *text = static_cast<char *>(palloc(sno::kTextLen + 1));
  sno::encode(Sno::arg(fcinfo, 0), text);
  text[sno::kTextLen] = '\0';
  PG_RETURN_CSTRING(text);
}

SNOWFLAKE_FUNCTION(sno_recv) { return Sno::recv(fcinfo); }
SNOWFLAKE_FUNCTION(sno_send) { return Sno::send(fcinfo); }

SNOWFLAKE_FUNCTION(sno_cmp) { return Int32GetDatum(Sno::cmp(fcinfo)); }
SNOWFLAKE_FUNCTION(sno_eq) { return BoolGetDatum(Sno::cmp(fcinfo) == 0); }
SNOWFLAKE_FUNCTION(sno_ne) { return BoolGetDatum(Sno::cmp(fcinfo) != 0); }
SNOWFLAKE_FUNCTION(sno_lt) { return BoolGetDatum(Sno::cmp(fcinfo) < 0); }
SNOWFLAKE_FUNCTION(sno_le) { return BoolGetDatum(Sno::cmp(fcinfo) <= 0); }
SNOWFLAKE_FUNCTION(sno_gt) { return BoolGetDatum(Sno::cmp(fcinfo) > 0); }
SNOWFLAKE_FUNCTION(sno_ge) { return BoolGetDatum(Sno::cmp(fcinfo) >= 0); }
SNOWFLAKE_FUNCTION(sno_smaller) { return Sno::smaller(fcinfo); }
SNOWFLAKE_FUNCTION(sno_larger) { return Sno::larger(fcinfo); }
SNOWFLAKE_FUNCTION(sno_sortsupport) { return Sno::sortsupport(fcinfo); }
SNOWFLAKE_FUNCTION(sno_hash) { return Sno::hash(fcinfo); }
SNOWFLAKE_FUNCTION(sno_hash_extended) { return Sno::hash_extended(fcinfo); }

SNOWFLAKE_FUNCTION(sno_to_bytea) { return Sno::to_bytea(fcinfo); }
SNOWFLAKE_FUNCTION(bytea_to_sno) { return Sno::from_bytea(fcinfo, "a sno", "A sno"); }

SNOWFLAKE_FUNCTION(sno_decode) {
  const sno::Fields f = sno::fields(Sno::arg(fcinfo, 0));
  const Datum values[5] = {
      TimestampTzGetDatum(unix_ms_to_timestamptz(sno::units_to_unix_ms(f.units))),
      Int32GetDatum(f.meta), Int32GetDatum(f.partition), Int32GetDatum(f.sequence),
      BoolGetDatum(f.tick)};
  return out_record(fcinfo, values, 5);
}

SNOWFLAKE_FUNCTION(sno_timestamp) {
  return TimestampTzGetDatum(
      unix_ms_to_timestamptz(sno::units_to_unix_ms(sno::fields(Sno::arg(fcinfo, 0)).units)));
}

SNOWFLAKE_FUNCTION(sno_at) {
  uint8_t bytes[sno::kBytes];
  if (!sno::at_unix_ms(timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(0)), bytes))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp is outside the range of sno IDs"),
                    errdetail("sno IDs cover 2010-01-01 00:00:00 UTC to 2079-09-07 "
                              "15:47:35.551 UTC, in 4 ms units.")));
  return Sno::datum(bytes);
}
