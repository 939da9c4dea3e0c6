// The ulid type: 16 bytes, no header; text I/O in Crockford base32 (and input in a UUID's
// form), binary I/O, comparison (with a ulid or a uuid), hashing, sort support, casts, and the
// generator.
#include <cstring>

#include "core/id128.hpp"
#include "core/ulid_codec.hpp"

#include "glue/system_clock.hpp"
#include "glue/streams.hpp"
#include "glue/random.hpp"
#include "glue/timestamps.hpp"

extern "C" {
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/sortsupport.h"
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

struct Ulid {
  uint8_t data[16];
};
static_assert(sizeof(Ulid) == 16, "ulid is 16 bytes");

inline const Ulid *arg_ulid(FunctionCallInfo fcinfo, int n) {
  return reinterpret_cast<const Ulid *>(DatumGetPointer(PG_GETARG_DATUM(n)));
}

inline Datum ulid_datum(const uint8_t bytes[16]) {
  Ulid *u = static_cast<Ulid *>(palloc(sizeof(Ulid)));
  std::memcpy(u->data, bytes, sizeof u->data);
  return PointerGetDatum(u);
}

inline int cmp(FunctionCallInfo fcinfo) {
  return std::memcmp(arg_ulid(fcinfo, 0)->data, arg_ulid(fcinfo, 1)->data, 16);
}

int fast_cmp(Datum a, Datum b, SortSupport) {
  return std::memcmp(DatumGetPointer(a), DatumGetPointer(b), 16);
}

u128 random_u80() {
  const uint64_t lo = random_u64();
  const uint64_t hi = random_u64();
  return (u128{hi & 0xffff} << 64) | lo;
}

const char *parse_problem(UlidParse p) {
  switch (p) {
    case UlidParse::kBadLength:
      return "A ULID is 26 characters of Crockford base32, or a UUID's 36 "
             "(8-4-4-4-12 hexadecimal digits).";
    case UlidParse::kBadCharacter:
      return "A ULID uses the characters 0-9 and A-Z without I, L, O and U, in either case.";
    case UlidParse::kOverflow:
      return "The first character of a ULID is at most 7 (a ULID has 128 bits).";
    case UlidParse::kOk:
      break;
  }
  return "";
}

// A UUID in its standard text form (RFC 9562, section 4: 8-4-4-4-12 hexadecimal digits,
// either case), as drivers send a uuid parameter: the same 16 bytes as a ulid.
bool uuid_form(const char *text, size_t len) {
  if (len != 36) return false;
  for (size_t i = 0; i < len; ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !(text[i] != '\0' && std::strchr("0123456789abcdefABCDEF", text[i]))) return false;
  }
  return true;
}

// Whether the text starts like a date (YYYY-), which a ULID never does: the HINT names the
// functions that make a ULID from a time.
bool date_form(const char *text, size_t len) {
  if (len < 5 || text[4] != '-') return false;
  for (size_t i = 0; i < 4; ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

}  // namespace

SNOWFLAKE_FUNCTION(ulid_in) {
  const char *text = PG_GETARG_CSTRING(0);
  uint8_t bytes[16];
  const size_t len = std::strlen(text);
  // The UUID form is read by core's uuid_in, which cannot fail on text of that form.
  if (uuid_form(text, len)) {
    const Datum uuid = DirectFunctionCall1(uuid_in, CStringGetDatum(text));
    return ulid_datum(reinterpret_cast<const pg_uuid_t *>(DatumGetPointer(uuid))->data);
  }
  UlidParse p = ulid_decode(text, len, bytes);
  if (unlikely(p != UlidParse::kOk)) {
    // The length in characters: 26 of them, some of more than one byte, hold a character
    // outside the alphabet; 26 bytes of fewer characters are of the wrong length.
    const bool right_length =
        static_cast<size_t>(pg_mbstrlen_with_len(text, static_cast<int>(len))) == kUlidTextLen;
    if (p == UlidParse::kBadLength && right_length)
      p = UlidParse::kBadCharacter;
    else if (p != UlidParse::kBadLength && !right_length)
      p = UlidParse::kBadLength;
    SNOWFLAKE_ERETURN(fcinfo->context, (Datum)0,
                      (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                       errmsg("invalid input syntax for type %s: \"%s\"", "ulid", text),
                       errdetail("%s", parse_problem(p)),
                       date_form(text, len)
                           ? errhint("For the ULID of a time: ulid_from_time(timestamptz) (random "
                                     "beyond its millisecond), or ulid_at(timestamptz) (the "
                                     "smallest of its millisecond, for ranges).")
                           : 0));
  }
  return ulid_datum(bytes);
}

SNOWFLAKE_FUNCTION(ulid_out) {
  char *text = static_cast<char *>(palloc(kUlidTextLen + 1));
  ulid_encode(arg_ulid(fcinfo, 0)->data, text);
  text[kUlidTextLen] = '\0';
  PG_RETURN_CSTRING(text);
}

SNOWFLAKE_FUNCTION(ulid_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  return ulid_datum(reinterpret_cast<const uint8_t *>(pq_getmsgbytes(buf, 16)));
}

SNOWFLAKE_FUNCTION(ulid_send) {
  StringInfoData buf;
  pq_begintypsend(&buf);
  pq_sendbytes(&buf, reinterpret_cast<const char *>(arg_ulid(fcinfo, 0)->data), 16);
  PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

SNOWFLAKE_FUNCTION(ulid_cmp) { return Int32GetDatum(cmp(fcinfo)); }
SNOWFLAKE_FUNCTION(ulid_eq) { return BoolGetDatum(cmp(fcinfo) == 0); }
SNOWFLAKE_FUNCTION(ulid_ne) { return BoolGetDatum(cmp(fcinfo) != 0); }
SNOWFLAKE_FUNCTION(ulid_lt) { return BoolGetDatum(cmp(fcinfo) < 0); }
SNOWFLAKE_FUNCTION(ulid_le) { return BoolGetDatum(cmp(fcinfo) <= 0); }
SNOWFLAKE_FUNCTION(ulid_gt) { return BoolGetDatum(cmp(fcinfo) > 0); }
SNOWFLAKE_FUNCTION(ulid_ge) { return BoolGetDatum(cmp(fcinfo) >= 0); }

SNOWFLAKE_FUNCTION(ulid_smaller) { return PG_GETARG_DATUM(cmp(fcinfo) <= 0 ? 0 : 1); }

SNOWFLAKE_FUNCTION(ulid_larger) { return PG_GETARG_DATUM(cmp(fcinfo) >= 0 ? 0 : 1); }

SNOWFLAKE_FUNCTION(ulid_sortsupport) {
  SortSupport ssup = reinterpret_cast<SortSupport>(PG_GETARG_POINTER(0));
  ssup->comparator = fast_cmp;
  PG_RETURN_VOID();
}

SNOWFLAKE_FUNCTION(ulid_hash) { return hash_any(arg_ulid(fcinfo, 0)->data, 16); }

SNOWFLAKE_FUNCTION(ulid_hash_extended) {
  return hash_any_extended(arg_ulid(fcinfo, 0)->data, 16, PG_GETARG_INT64(1));
}

SNOWFLAKE_FUNCTION(ulid_to_bytea) {
  bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + 16));
  SET_VARSIZE(out, VARHDRSZ + 16);
  std::memcpy(VARDATA(out), arg_ulid(fcinfo, 0)->data, 16);
  PG_RETURN_BYTEA_P(out);
}

SNOWFLAKE_FUNCTION(bytea_to_ulid) {
  const bytea *in = PG_GETARG_BYTEA_PP(0);
  if (VARSIZE_ANY_EXHDR(in) != 16)
    ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                    errmsg("invalid length for a ulid: %d bytes", (int)VARSIZE_ANY_EXHDR(in)),
                    errdetail("A ulid is 16 bytes.")));
  return ulid_datum(reinterpret_cast<const uint8_t *>(VARDATA_ANY(in)));
}

SNOWFLAKE_FUNCTION(ulid_timestamp) {
  return TimestampTzGetDatum(
      unix_ms_to_timestamptz(static_cast<int64_t>(uuid_unix_ms(arg_ulid(fcinfo, 0)->data))));
}

SNOWFLAKE_FUNCTION(ulid_at) {
  uint8_t bytes[16];
  ulid_compose(bytes, timestamptz_to_unix_ms48(PG_GETARG_TIMESTAMPTZ(0)), 0);
  return ulid_datum(bytes);
}

// The server's ULID stream (core/issue_loop.hpp's kind): 80 random bits drawn for a value that
// starts a new millisecond; within one, the previous value plus one.
struct UlidKind {
  Streams128 &streams;
  bool have_random = false;
  u128 random = 0;
  u128 issued = 0;

  uint64_t origin_unix_ms() const { return 0; }
  [[noreturn]] void raise_before_origin(uint64_t) { pg_unreachable(); }
  [[noreturn]] void raise_exhausted(const IssueStep &) { glue::raise_exhausted("ulid"); }

  IssueStep step(const IssueInput &in) {
    if (!have_random && streams.ulid.likely_new_ms(in.now_unix_ms)) draw();
    const Limits limits{static_cast<uint64_t>(max_lead_ms), kMaxUnixMs48, in.limit_unix_ms};
    UlidNext r = ulid_next(streams.ulid, in.now_unix_ms, have_random, random, limits);
    if (r.step == Step::kNeedRandom) {
      draw();
      r = ulid_next(streams.ulid, in.now_unix_ms, have_random, random, limits);
    }
    if (r.step == Step::kIssued) {
      issued = r.value;
      return IssueStep{r.step, 0, static_cast<uint64_t>(r.value >> kUlidRandomBits)};
    }
    // kNeedRandom cannot come twice: the second call has random bits.
    return unix_step(r.step, r.wait_ms, 0, 0);
  }
  void draw() {
    random = random_u80();
    have_random = true;
  }
};

SNOWFLAKE_FUNCTION(ulid_generate) {
  const Sources128 src = sources128();
  IssueEnv env(src.clock, src.reservation, nullptr);
  UlidKind kind{src.streams};
  (void)issue_loop(env, kind);
  uint8_t bytes[16];
  store_be128(bytes, kind.issued);
  return ulid_datum(bytes);
}

SNOWFLAKE_FUNCTION(ulid_from_time) {
  const uint64_t ms = timestamptz_to_unix_ms48(PG_GETARG_TIMESTAMPTZ(0));
  uint8_t bytes[16];
  ulid_compose(bytes, ms, random_u80());
  return ulid_datum(bytes);
}
