// SQL functions that read other systems' IDs: the 64-bit layouts of layout.hpp's foreign
// namespace and MongoDB ObjectIds (KSUIDs: ksuid.cpp). All of them IMMUTABLE: a layout is a
// constant. snowflake_decode(id, layout) gives every layout's fields as (ts, shard, seq); the
// <system>_decode functions give them under the system's own names, with the node fields that
// Twitter and Discord combine apart.
#include "core/foreign_codec.hpp"

#include "glue/snowflake.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "lib/stringinfo.h"
#include "utils/builtins.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

const foreign::Layout &layout_arg(FunctionCallInfo fcinfo, int n) {
  const text *name = PG_GETARG_TEXT_PP(n);
  const foreign::Layout *l = foreign::find(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
  if (l == nullptr) {
    StringInfoData known;
    initStringInfo(&known);
    for (const foreign::Layout &k : foreign::kLayouts)
      appendStringInfo(&known, "%s%s", known.len > 0 ? ", " : "", k.name);
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("unknown snowflake layout \"%s\"", text_to_cstring(name)),
                    errdetail("The known layouts are %s.", known.data),
                    errhint("For this extension's own IDs, call snowflake_decode(id) or "
                            "snowflake_at(ts); to pass an epoch, give it as a timestamptz.")));
  }
  return *l;
}

TimestampTz unix_s_to_timestamptz(int64_t unix_s) { return unix_ms_to_timestamptz(unix_s * 1000); }

[[noreturn]] pg_noinline void raise_bad_text(const char *kind, const char *what, const text *in) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid input syntax for %s: \"%s\"", kind, text_to_cstring(in)),
                  errdetail("%s", what)));
  pg_unreachable();
}

// The fields of a layout's ID as (ts, node, seq), or with the node's two halves apart.
Datum fields_record(FunctionCallInfo fcinfo, const foreign::Layout &l, bool split) {
  const foreign::Fields f = foreign::decode(l, checked_id(PG_GETARG_INT64(0), l.name));
  const foreign::NodeParts n = foreign::split_node(f.node);
  const Datum ts = TimestampTzGetDatum(unix_ms_to_timestamptz(f.unix_ms));
  const Datum seq = Int32GetDatum(static_cast<int32>(f.seq));
  if (!split) {
    const Datum values[3] = {ts, Int32GetDatum(static_cast<int32>(f.node)), seq};
    return out_record(fcinfo, values, 3);
  }
  const Datum values[4] = {ts, Int32GetDatum(static_cast<int32>(n.high)),
                           Int32GetDatum(static_cast<int32>(n.low)), seq};
  return out_record(fcinfo, values, 4);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_decode_layout) {
  return fields_record(fcinfo, layout_arg(fcinfo, 1), false);
}

SNOWFLAKE_FUNCTION(snowflake_at_layout) {
  const foreign::Layout &l = layout_arg(fcinfo, 1);
  const int64_t unix_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(0));
  uint64_t id = 0;
  if (!foreign::at(l, unix_ms, id))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp is outside the range of %s IDs", l.name),
                    errdetail("%s IDs cover %lld to %lld ms since 1970.", l.name,
                              static_cast<long long>(l.epoch_unix_ms),
                              static_cast<long long>(foreign::last_unix_ms(l)))));
  return Int64GetDatum(static_cast<int64>(id));
}

SNOWFLAKE_FUNCTION(twitter_decode) { return fields_record(fcinfo, foreign::kTwitter, true); }

SNOWFLAKE_FUNCTION(discord_decode) { return fields_record(fcinfo, foreign::kDiscord, true); }

SNOWFLAKE_FUNCTION(sonyflake_decode) { return fields_record(fcinfo, foreign::kSonyflake, false); }

// pgEdge swapped its node and count fields in 1.2: the layout argument says which release
// made the IDs, as no bit of an ID tells.
SNOWFLAKE_FUNCTION(pgedge_decode) {
  const foreign::Layout &l = layout_arg(fcinfo, 1);
  if (&l != &foreign::kPgedge && &l != &foreign::kPgedge11)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("pgedge_decode does not read the layout \"%s\"", l.name),
                    errdetail("Its layouts are %s (pgEdge snowflake 1.2 and later) and %s "
                              "(1.0 and 1.1).",
                              foreign::kPgedge.name, foreign::kPgedge11.name),
                    errhint("For other layouts, call snowflake_decode(id, layout).")));
  return fields_record(fcinfo, l, false);
}

namespace {

void objectid_text_arg(FunctionCallInfo fcinfo, uint8_t id[foreign::kObjectIdBytes]) {
  const text *in = PG_GETARG_TEXT_PP(0);
  switch (foreign::objectid_from_hex(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), id)) {
    case foreign::Parse::kOk:
      return;
    case foreign::Parse::kBadLength:
      raise_bad_text("ObjectId", "An ObjectId is 24 hexadecimal digits.", in);
    default:
      raise_bad_text("ObjectId", "An ObjectId is 24 hexadecimal digits (0-9, a-f, A-F).", in);
  }
}

const uint8_t *objectid_bytea_arg(FunctionCallInfo fcinfo) {
  const bytea *in = PG_GETARG_BYTEA_PP(0);
  const size_t len = VARSIZE_ANY_EXHDR(in);
  if (len != foreign::kObjectIdBytes)
    ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                    errmsg("invalid length for an ObjectId: %zu bytes", len),
                    errdetail("An ObjectId is %zu bytes.", foreign::kObjectIdBytes)));
  return reinterpret_cast<const uint8_t *>(VARDATA_ANY(in));
}

Datum bytea_datum(const uint8_t *bytes, size_t len) {
  bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + len));
  SET_VARSIZE(out, VARHDRSZ + len);
  memcpy(VARDATA(out), bytes, len);
  return PointerGetDatum(out);
}

Datum objectid_record(FunctionCallInfo fcinfo, const uint8_t id[foreign::kObjectIdBytes]) {
  const Datum values[3] = {
      TimestampTzGetDatum(unix_s_to_timestamptz(foreign::objectid_unix_s(id))),
      bytea_datum(id + foreign::kObjectIdRandomOffset, foreign::kObjectIdRandomBytes),
      Int32GetDatum(static_cast<int32>(foreign::objectid_counter(id)))};
  return out_record(fcinfo, values, 3);
}

}  // namespace

SNOWFLAKE_FUNCTION(objectid_timestamp_text) {
  uint8_t id[foreign::kObjectIdBytes];
  objectid_text_arg(fcinfo, id);
  return TimestampTzGetDatum(unix_s_to_timestamptz(foreign::objectid_unix_s(id)));
}

SNOWFLAKE_FUNCTION(objectid_timestamp_bytea) {
  const uint8_t *id = objectid_bytea_arg(fcinfo);
  return TimestampTzGetDatum(unix_s_to_timestamptz(foreign::objectid_unix_s(id)));
}

SNOWFLAKE_FUNCTION(objectid_decode_text) {
  uint8_t id[foreign::kObjectIdBytes];
  objectid_text_arg(fcinfo, id);
  return objectid_record(fcinfo, id);
}

SNOWFLAKE_FUNCTION(objectid_decode_bytea) {
  return objectid_record(fcinfo, objectid_bytea_arg(fcinfo));
}
