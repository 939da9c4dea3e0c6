// The rsxid type (github.com/rs/xid's xid; PostgreSQL has a type xid of its own): 12 bytes,
// no header; text I/O in lower-case base32hex, binary I/O, comparison, hashing, sort support,
// casts to and from bytea, and the decoders. Every 12 bytes are an rsxid.
#include "core/xid_codec.hpp"

#include "glue/fixed_bytes.hpp"
#include "glue/snowflake.hpp"
#include "glue/text_input.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

using Rsxid = FixedBytes<xid::kBytes>;
constexpr const char *kA = "an rsxid";
constexpr const char *kAn = "An rsxid";

// Reads the text into out; a text of the wrong length in characters is named by its length,
// one of 20 characters, some of more than one byte, by its first character outside the
// alphabet, or by its last when that one's padding bits are set. With escontext (a type input
// called softly, 16 and later), the error is kept there and false returned.
bool parse(const char *s, size_t len, uint8_t out[xid::kBytes], [[maybe_unused]] Node *escontext) {
  const xid::TextParse p = xid::decode(s, len, out);
  if (likely(p.status == xid::TextParse::kOk)) return true;
  const size_t n = chars(s, len);
  char c[32];
  if (n != xid::kTextLen)
    SNOWFLAKE_ERETURN(escontext, false,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "rsxid", s),
                       errdetail("An rsxid is %zu characters, not %zu.", xid::kTextLen, n)));
  if (p.status != xid::TextParse::kBadPadding)
    SNOWFLAKE_ERETURN(escontext, false,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "rsxid", s),
                       errdetail("Character %s at position %zu is not one of 0-9 and a-v (lower "
                                 "case).",
                                 shown(s, len, p.position, c), chars(s, p.position) + 1)));
  SNOWFLAKE_ERETURN(escontext, false,
                    (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                     errmsg("invalid input syntax for type %s: \"%s\"", "rsxid", s),
                     errdetail("Character %s at position %zu is not 0 or g: the last character "
                               "of an rsxid carries 1 bit.",
                               shown(s, len, p.position, c), chars(s, p.position) + 1)));
}

// A text argument, read as the type's input reads it (its errors are ERRORs).
void text_arg(FunctionCallInfo fcinfo, uint8_t out[xid::kBytes]) {
  const char *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
  parse(s, std::strlen(s), out, nullptr);
}

TimestampTz timestamp_of(const uint8_t id[xid::kBytes]) {
  return unix_ms_to_timestamptz(int64_t{xid::unix_s(id)} * 1000);
}

Datum record(FunctionCallInfo fcinfo, const uint8_t id[xid::kBytes]) {
  const Datum values[4] = {TimestampTzGetDatum(timestamp_of(id)),
                           bytea_datum(id + xid::kMachineOffset, xid::kMachineBytes),
                           Int32GetDatum(xid::pid(id)),
                           Int32GetDatum(static_cast<int32>(xid::counter(id)))};
  return out_record(fcinfo, values, 4);
}

}  // namespace

SNOWFLAKE_FUNCTION(rsxid_in) {
  const char *s = PG_GETARG_CSTRING(0);
  uint8_t bytes[xid::kBytes];
  if (unlikely(!parse(s, std::strlen(s), bytes, fcinfo->context))) return (Datum)0;
  return Rsxid::datum(bytes);
}

SNOWFLAKE_FUNCTION(rsxid_out) {
  char *text = static_cast<char *>(palloc(xid::kTextLen + 1));
  xid::encode(Rsxid::arg(fcinfo, 0), text);
  text[xid::kTextLen] = '\0';
  PG_RETURN_CSTRING(text);
}

SNOWFLAKE_FUNCTION(rsxid_recv) { return Rsxid::recv(fcinfo); }
SNOWFLAKE_FUNCTION(rsxid_send) { return Rsxid::send(fcinfo); }

SNOWFLAKE_FUNCTION(rsxid_cmp) { return Int32GetDatum(Rsxid::cmp(fcinfo)); }
SNOWFLAKE_FUNCTION(rsxid_eq) { return BoolGetDatum(Rsxid::cmp(fcinfo) == 0); }
SNOWFLAKE_FUNCTION(rsxid_ne) { return BoolGetDatum(Rsxid::cmp(fcinfo) != 0); }
SNOWFLAKE_FUNCTION(rsxid_lt) { return BoolGetDatum(Rsxid::cmp(fcinfo) < 0); }
SNOWFLAKE_FUNCTION(rsxid_le) { return BoolGetDatum(Rsxid::cmp(fcinfo) <= 0); }
SNOWFLAKE_FUNCTION(rsxid_gt) { return BoolGetDatum(Rsxid::cmp(fcinfo) > 0); }
SNOWFLAKE_FUNCTION(rsxid_ge) { return BoolGetDatum(Rsxid::cmp(fcinfo) >= 0); }
SNOWFLAKE_FUNCTION(rsxid_smaller) { return Rsxid::smaller(fcinfo); }
SNOWFLAKE_FUNCTION(rsxid_larger) { return Rsxid::larger(fcinfo); }
SNOWFLAKE_FUNCTION(rsxid_sortsupport) { return Rsxid::sortsupport(fcinfo); }
SNOWFLAKE_FUNCTION(rsxid_hash) { return Rsxid::hash(fcinfo); }
SNOWFLAKE_FUNCTION(rsxid_hash_extended) { return Rsxid::hash_extended(fcinfo); }

SNOWFLAKE_FUNCTION(rsxid_to_bytea) { return Rsxid::to_bytea(fcinfo); }
SNOWFLAKE_FUNCTION(bytea_to_rsxid) { return Rsxid::from_bytea(fcinfo, kA, kAn); }

SNOWFLAKE_FUNCTION(rsxid_timestamp) {
  return TimestampTzGetDatum(timestamp_of(Rsxid::arg(fcinfo, 0)));
}

SNOWFLAKE_FUNCTION(rsxid_timestamp_text) {
  uint8_t id[xid::kBytes];
  text_arg(fcinfo, id);
  return TimestampTzGetDatum(timestamp_of(id));
}

SNOWFLAKE_FUNCTION(rsxid_at) {
  const int64_t s = timestamptz_to_unix_s(PG_GETARG_TIMESTAMPTZ(0));
  uint8_t bytes[xid::kBytes];
  if (!xid::at_unix_s(s, bytes))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp is outside the range of rsxids"),
                    errdetail("rsxids cover 1970-01-01 00:00:00 UTC to 2106-02-07 06:28:15 "
                              "UTC, in seconds.")));
  return Rsxid::datum(bytes);
}

SNOWFLAKE_FUNCTION(rsxid_decode) { return record(fcinfo, Rsxid::arg(fcinfo, 0)); }

SNOWFLAKE_FUNCTION(rsxid_decode_text) {
  uint8_t id[xid::kBytes];
  text_arg(fcinfo, id);
  return record(fcinfo, id);
}

SNOWFLAKE_FUNCTION(rsxid_decode_bytea) {
  return record(fcinfo, Rsxid::bytea_arg(fcinfo, 0, kA, kAn));
}
