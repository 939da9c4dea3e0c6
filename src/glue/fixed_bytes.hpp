// What every fixed-length ID type of N bytes without a header (sno, rsxid, ksuid) does the same
// way: binary I/O of the N bytes, comparison in byte order (which is each kind's time order),
// sort support, hashing, min and max, and the casts to and from bytea; each kind's file gives
// its SQL-callable functions these bodies.
#pragma once

#include "glue/pg.hpp"

extern "C" {
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/sortsupport.h"
}

namespace snowflake::glue {

// A bytea of len bytes.
inline Datum bytea_datum(const uint8_t *bytes, size_t len) {
  bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + len));
  SET_VARSIZE(out, VARHDRSZ + len);
  std::memcpy(VARDATA(out), bytes, len);
  return PointerGetDatum(out);
}

// a_kind and an_kind name the type in messages: "an rsxid", "An rsxid".
template <size_t N>
struct FixedBytes {
  static const uint8_t *arg(FunctionCallInfo fcinfo, int n) {
    return reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(n)));
  }

  static Datum datum(const uint8_t *bytes) {
    void *p = palloc(N);
    std::memcpy(p, bytes, N);
    return PointerGetDatum(p);
  }

  static int cmp(FunctionCallInfo fcinfo) { return std::memcmp(arg(fcinfo, 0), arg(fcinfo, 1), N); }

  static int fast_cmp(Datum a, Datum b, SortSupport) {
    return std::memcmp(DatumGetPointer(a), DatumGetPointer(b), N);
  }

  static Datum sortsupport(FunctionCallInfo fcinfo) {
    SortSupport ssup = reinterpret_cast<SortSupport>(PG_GETARG_POINTER(0));
    ssup->comparator = fast_cmp;
    PG_RETURN_VOID();
  }

  static Datum smaller(FunctionCallInfo fcinfo) {
    return PG_GETARG_DATUM(cmp(fcinfo) <= 0 ? 0 : 1);
  }
  static Datum larger(FunctionCallInfo fcinfo) { return PG_GETARG_DATUM(cmp(fcinfo) >= 0 ? 0 : 1); }

  static Datum hash(FunctionCallInfo fcinfo) { return hash_any(arg(fcinfo, 0), N); }
  static Datum hash_extended(FunctionCallInfo fcinfo) {
    return hash_any_extended(arg(fcinfo, 0), N, PG_GETARG_INT64(1));
  }

  // Exactly N bytes: more are refused by the server (22P03), fewer by pq_getmsgbytes (08P01).
  static Datum recv(FunctionCallInfo fcinfo) {
    StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
    return datum(reinterpret_cast<const uint8_t *>(pq_getmsgbytes(buf, N)));
  }

  static Datum send(FunctionCallInfo fcinfo) {
    StringInfoData buf;
    pq_begintypsend(&buf);
    pq_sendbytes(&buf, reinterpret_cast<const char *>(arg(fcinfo, 0)), N);
    PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
  }

  static Datum to_bytea(FunctionCallInfo fcinfo) { return bytea_datum(arg(fcinfo, 0), N); }

  // The N bytes of a bytea argument; another length is 22P03.
  static const uint8_t *bytea_arg(FunctionCallInfo fcinfo, int n, const char *a_kind,
                                  const char *an_kind) {
    const bytea *in = PG_GETARG_BYTEA_PP(n);
    const size_t len = VARSIZE_ANY_EXHDR(in);
    if (len != N)
      ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                      errmsg("invalid length for %s: %zu bytes", a_kind, len),
                      errdetail("%s is %zu bytes.", an_kind, N)));
    return reinterpret_cast<const uint8_t *>(VARDATA_ANY(in));
  }

  static Datum from_bytea(FunctionCallInfo fcinfo, const char *a_kind, const char *an_kind) {
    return datum(bytea_arg(fcinfo, 0, a_kind, an_kind));
  }
};

}  // namespace snowflake::glue
