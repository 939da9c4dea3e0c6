// The ksuid type (github.com/segmentio/ksuid): 20 bytes, no header; text I/O in 27 characters
// of base62, binary I/O, comparison, hashing, sort support, casts to and from bytea, and the
// decoders, which also read KSUIDs kept as text. Every 20 bytes are a KSUID.
#include "core/ksuid_codec.hpp"

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

using Ksuid = FixedBytes<ksuid::kBytes>;
constexpr const char *kA = "a KSUID";
constexpr const char *kAn = "A KSUID";

// Reads the text into out; a text of the wrong length in characters is named by its length,
// one of 27 characters, some of more than one byte, by its first character outside base62,
// and a number above 2^160 - 1 as such. With escontext (a type input called softly, 16 and
// later), the error is kept there and false returned.
bool parse(const char *s, size_t len, uint8_t out[ksuid::kBytes],
           [[maybe_unused]] Node *escontext) {
  const ksuid::TextParse p = ksuid::decode(s, len, out);
  if (likely(p.status == ksuid::TextParse::kOk)) return true;
  const size_t n = chars(s, len);
  char c[32];
  if (n != ksuid::kTextLen)
    SNOWFLAKE_ERETURN(escontext, false,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "ksuid", s),
                       errdetail("A KSUID is %zu characters, not %zu.", ksuid::kTextLen, n)));
  if (p.status != ksuid::TextParse::kOverflow)
    SNOWFLAKE_ERETURN(escontext, false,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "ksuid", s),
                       errdetail("Character %s at position %zu is not one of 0-9, A-Z and a-z.",
                                 shown(s, len, p.position, c), chars(s, p.position) + 1)));
  SNOWFLAKE_ERETURN(escontext, false,
                    (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                     errmsg("invalid input syntax for type %s: \"%s\"", "ksuid", s),
                     errdetail("It is above the largest KSUID, %s (2^160 - 1).", ksuid::kMaxText)));
}

// A text argument, read as the type's input reads it (its errors are ERRORs).
void text_arg(FunctionCallInfo fcinfo, uint8_t out[ksuid::kBytes]) {
  const char *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
  parse(s, std::strlen(s), out, nullptr);
}

TimestampTz timestamp_of(const uint8_t id[ksuid::kBytes]) {
  return unix_ms_to_timestamptz(ksuid::unix_s(id) * 1000);
}

Datum record(FunctionCallInfo fcinfo, const uint8_t id[ksuid::kBytes]) {
  const Datum values[2] = {TimestampTzGetDatum(timestamp_of(id)),
                           bytea_datum(id + ksuid::kPayloadOffset, ksuid::kPayloadBytes)};
  return out_record(fcinfo, values, 2);
}

}  // namespace

SNOWFLAKE_FUNCTION(ksuid_in) {
  const char *s = PG_GETARG_CSTRING(0);
  uint8_t bytes[ksuid::kBytes];
  if (unlikely(!parse(s, std::strlen(s), bytes, fcinfo->context))) return (Datum)0;
  return Ksuid::datum(bytes);
}

SNOWFLAKE_FUNCTION(ksuid_out) {
  char *text = static_cast<char *>(palloc(ksuid::kTextLen + 1));
  ksuid::encode(Ksuid::arg(fcinfo, 0), text);
  text[ksuid::kTextLen] = '\0';
  PG_RETURN_CSTRING(text);
}

SNOWFLAKE_FUNCTION(ksuid_recv) { return Ksuid::recv(fcinfo); }
SNOWFLAKE_FUNCTION(ksuid_send) { return Ksuid::send(fcinfo); }

SNOWFLAKE_FUNCTION(ksuid_cmp) { return Int32GetDatum(Ksuid::cmp(fcinfo)); }
SNOWFLAKE_FUNCTION(ksuid_eq) { return BoolGetDatum(Ksuid::cmp(fcinfo) == 0); }
SNOWFLAKE_FUNCTION(ksuid_ne) { return BoolGetDatum(Ksuid::cmp(fcinfo) != 0); }
SNOWFLAKE_FUNCTION(ksuid_lt) { return BoolGetDatum(Ksuid::cmp(fcinfo) < 0); }
SNOWFLAKE_FUNCTION(ksuid_le) { return BoolGetDatum(Ksuid::cmp(fcinfo) <= 0); }
SNOWFLAKE_FUNCTION(ksuid_gt) { return BoolGetDatum(Ksuid::cmp(fcinfo) > 0); }
SNOWFLAKE_FUNCTION(ksuid_ge) { return BoolGetDatum(Ksuid::cmp(fcinfo) >= 0); }
SNOWFLAKE_FUNCTION(ksuid_smaller) { return Ksuid::smaller(fcinfo); }
SNOWFLAKE_FUNCTION(ksuid_larger) { return Ksuid::larger(fcinfo); }
SNOWFLAKE_FUNCTION(ksuid_sortsupport) { return Ksuid::sortsupport(fcinfo); }
SNOWFLAKE_FUNCTION(ksuid_hash) { return Ksuid::hash(fcinfo); }
SNOWFLAKE_FUNCTION(ksuid_hash_extended) { return Ksuid::hash_extended(fcinfo); }

SNOWFLAKE_FUNCTION(ksuid_to_bytea) { return Ksuid::to_bytea(fcinfo); }
SNOWFLAKE_FUNCTION(bytea_to_ksuid) { return Ksuid::from_bytea(fcinfo, kA, kAn); }

SNOWFLAKE_FUNCTION(ksuid_timestamp) {
  return TimestampTzGetDatum(timestamp_of(Ksuid::arg(fcinfo, 0)));
}

SNOWFLAKE_FUNCTION(ksuid_timestamp_text) {
  uint8_t id[ksuid::kBytes];
  text_arg(fcinfo, id);
  return TimestampTzGetDatum(timestamp_of(id));
}

SNOWFLAKE_FUNCTION(ksuid_at) {
  const int64_t s = timestamptz_to_unix_s(PG_GETARG_TIMESTAMPTZ(0));
  uint8_t bytes[ksuid::kBytes];
  if (!ksuid::at_unix_s(s, bytes))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("timestamp is outside the range of KSUIDs"),
                    errdetail("KSUIDs cover 2014-05-13 16:53:20 UTC to 2150-06-19 23:21:35 UTC, "
                              "in seconds.")));
  return Ksuid::datum(bytes);
}

SNOWFLAKE_FUNCTION(ksuid_decode) { return record(fcinfo, Ksuid::arg(fcinfo, 0)); }

SNOWFLAKE_FUNCTION(ksuid_decode_text) {
  uint8_t id[ksuid::kBytes];
  text_arg(fcinfo, id);
  return record(fcinfo, id);
}
