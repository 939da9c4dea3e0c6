// SQL functions that read other systems' IDs: the 64-bit layouts of layout.hpp's foreign
// namespace, MongoDB ObjectIds and KSUIDs. All of them IMMUTABLE: a layout is a constant.
#include "../core/foreign_codec.hpp"

#include "snowflake.hpp"
#include "timestamps.hpp"

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

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_decode_layout) {
  const foreign::Layout &l = layout_arg(fcinfo, 1);
  const foreign::Fields f = foreign::decode(l, checked_id(PG_GETARG_INT64(0), l.name));
  return decoded_record(fcinfo, unix_ms_to_timestamptz(f.unix_ms), f.node, f.seq);
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

SNOWFLAKE_FUNCTION(objectid_timestamp_text) {
  const text *in = PG_GETARG_TEXT_PP(0);
  uint8_t id[foreign::kObjectIdBytes];
  switch (foreign::objectid_from_hex(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), id)) {
    case foreign::Parse::kOk:
      break;
    case foreign::Parse::kBadLength:
      raise_bad_text("ObjectId", "An ObjectId is 24 hexadecimal digits.", in);
    default:
      raise_bad_text("ObjectId", "An ObjectId is 24 hexadecimal digits (0-9, a-f, A-F).", in);
  }
  return TimestampTzGetDatum(unix_s_to_timestamptz(foreign::objectid_unix_s(id)));
}

SNOWFLAKE_FUNCTION(objectid_timestamp_bytea) {
  const bytea *in = PG_GETARG_BYTEA_PP(0);
  const size_t len = VARSIZE_ANY_EXHDR(in);
  if (len != foreign::kObjectIdBytes)
    ereport(ERROR, (errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
                    errmsg("an ObjectId is 12 bytes, not %zu", len)));
  return TimestampTzGetDatum(unix_s_to_timestamptz(
      foreign::objectid_unix_s(reinterpret_cast<const uint8_t *>(VARDATA_ANY(in)))));
}

SNOWFLAKE_FUNCTION(ksuid_timestamp) {
  const text *in = PG_GETARG_TEXT_PP(0);
  uint8_t id[foreign::kKsuidBytes];
  switch (foreign::ksuid_from_base62(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), id)) {
    case foreign::Parse::kOk:
      break;
    case foreign::Parse::kBadLength:
      raise_bad_text("KSUID", "A KSUID is 27 base62 characters.", in);
    case foreign::Parse::kOverflow:
      raise_bad_text("KSUID", "It is above the largest KSUID, aWgEPTl1tmebfsQzFP4bxwgy80V.", in);
    default:
      raise_bad_text("KSUID", "A KSUID is 27 base62 characters (0-9, A-Z, a-z).", in);
  }
  return TimestampTzGetDatum(unix_s_to_timestamptz(foreign::ksuid_unix_s(id)));
}
