// SQL functions of masking: snowflake_mask/unmask (a token for a bigint, with an optional
// typed prefix), sno_mask/unmask (the same token for a sno), uuidv7_mask/unmask (a façade hiding
// the time and rand_a), uuidv47_mask/unmask (uuidv47's façade) and ulid_mask/unmask. The keys come
// from snowflake.mask_key_file (mask_keys.cpp); the formats are the core's (src/core/mask).
#include "core/mask.hpp"

#include "glue/mask_keys.hpp"

extern "C" {
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;
using namespace snowflake::glue;

// A call site's prefix, checked once and kept across the rows of a query. Its MAC depends on
// the key (unmasking tries every key), so the keyring computes and keeps it.
struct PrefixCache {
  size_t len;
  char prefix[kMaskPrefixMax + 1];
};

const char *prefix_rule() {
  return "A prefix is at most 63 characters of a to z and the underscore, and does not start "
         "or end with an underscore.";
}

// The prefix argument n, checked once per call site.
const PrefixCache &prefix_arg(FunctionCallInfo fcinfo, int n) {
  const text *t = PG_GETARG_TEXT_PP(n);
  const char *p = VARDATA_ANY(t);
  const size_t len = VARSIZE_ANY_EXHDR(t);
  auto *cache = static_cast<PrefixCache *>(fcinfo->flinfo->fn_extra);
  if (likely(cache != nullptr && cache->len == len && std::memcmp(cache->prefix, p, len) == 0))
    return *cache;
  if (check_mask_prefix(p, len) != MaskPrefix::kOk) {
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid token prefix \"%s\"", text_to_cstring(t)),
                    errdetail("%s", prefix_rule())));
  }
  if (cache == nullptr) {
    cache = static_cast<PrefixCache *>(
        MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(PrefixCache)));
    fcinfo->flinfo->fn_extra = cache;
  }
  std::memcpy(cache->prefix, p, len);
  cache->prefix[len] = '\0';
  cache->len = len;
  return *cache;
}

const PrefixCache kNoPrefix = {0, ""};

[[noreturn]] void cipher_failed() {
  ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                  errmsg("the cipher library could not mask or unmask with this key")));
}

Datum token_datum(const char *prefix, size_t len, const uint8_t body[16]) {
  text *out = static_cast<text *>(palloc(VARHDRSZ + kMaskTokenMax));
  const size_t n = format_mask_token(prefix, len, body, VARDATA(out));
  SET_VARSIZE(out, VARHDRSZ + n);
  return PointerGetDatum(out);
}

Datum mask(FunctionCallInfo fcinfo, const PrefixCache &p) {
  MaskKeyring &ring = mask_keyring();
  uint8_t body[16];
  if (unlikely(!ring.mask_bigint(PG_GETARG_INT64(0), p.prefix, p.len, body))) cipher_failed();
  return token_datum(p.prefix, p.len, body);
}

const char *token_problem(TokenParse p) {
  switch (p) {
    case TokenParse::kBadLength:
      return "A token is 26 characters, after its prefix and an underscore if it has one.";
    case TokenParse::kBadCharacter:
      return "A token uses the characters 0-9 and a-z without i, l, o and u, in either case.";
    case TokenParse::kOverflow:
      return "The first character of a token, after its prefix, is at most 7.";
    case TokenParse::kBadPrefix:
      return prefix_rule();
    case TokenParse::kNotAuthentic:
      return "No key of snowflake.mask_key_file made this token with this prefix: it was "
             "changed or mistyped, or its key has been removed.";
    case TokenParse::kOk:
      break;
  }
  return "";
}

[[noreturn]] void bad_token(const text *t, TokenParse p, const char *kind = "snowflake") {
  // Tokens are short; a long string is cut, so that a message never carries much of the input,
  // at a character's boundary (a cut inside one would make the message invalid in the
  // database's encoding, and fail to convert to the client's).
  const int len = static_cast<int>(VARSIZE_ANY_EXHDR(t));
  const int kept = pg_mbcliplen(VARDATA_ANY(t), len, 100);
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid %s token: \"%.*s%s\"", kind, kept, VARDATA_ANY(t),
                         kept < len ? "..." : ""),
                  errdetail("%s", token_problem(p))));
}

// The token argument's body, which must carry the prefix expected (empty for none); kind names
// the token in messages ("snowflake", "sno").
void token_body(FunctionCallInfo fcinfo, const PrefixCache &expected, const char *kind,
                uint8_t body[16]) {
  const text *t = PG_GETARG_TEXT_PP(0);
  char prefix[kMaskPrefixMax + 1];
  size_t plen = 0;
  const TokenParse p = split_mask_token(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), prefix, &plen, body);
  if (p != TokenParse::kOk) bad_token(t, p, kind);
  if (plen != expected.len || std::memcmp(prefix, expected.prefix, plen) != 0) {
    if (expected.len == 0) {
      ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                      errmsg("%s token has the prefix \"%s\", and none was given", kind, prefix),
                      errhint("Give the prefix the token must carry: %s_unmask(token, '%s').", kind,
                              prefix)));
    }
    if (plen == 0) {
      ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                      errmsg("%s token has no prefix, not \"%s\"", kind, expected.prefix)));
    }
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
             errmsg("%s token has the prefix \"%s\", not \"%s\"", kind, prefix, expected.prefix)));
  }
}

// expected: the prefix the token must carry, empty for none.
Datum unmask(FunctionCallInfo fcinfo, const PrefixCache &expected) {
  const text *t = PG_GETARG_TEXT_PP(0);
  uint8_t body[16];
  token_body(fcinfo, expected, "snowflake", body);
  MaskKeyring &ring = mask_keyring();
  int64_t id = 0;
  int key_id = -1;
  const TokenParse r = ring.unmask_bigint(body, expected.prefix, expected.len, &id, &key_id);
  if (unlikely(ring.failed())) cipher_failed();
  if (r != TokenParse::kOk) bad_token(t, r);
  PG_RETURN_INT64(id);
}

Datum sno_mask_datum(FunctionCallInfo fcinfo, const PrefixCache &p) {
  const uint8_t *id = reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(0)));
  MaskKeyring &ring = mask_keyring();
  uint8_t body[16];
  if (unlikely(!ring.mask_sno(id, p.prefix, p.len, body))) cipher_failed();
  return token_datum(p.prefix, p.len, body);
}

Datum sno_unmask_datum(FunctionCallInfo fcinfo, const PrefixCache &expected) {
  const text *t = PG_GETARG_TEXT_PP(0);
  uint8_t body[16];
  token_body(fcinfo, expected, "sno", body);
  MaskKeyring &ring = mask_keyring();
  uint8_t *id = static_cast<uint8_t *>(palloc(kMaskSnoLen));
  int key_id = -1;
  const TokenParse r = ring.unmask_sno(body, expected.prefix, expected.len, id, &key_id);
  if (unlikely(ring.failed())) cipher_failed();
  if (r != TokenParse::kOk) bad_token(t, r, "sno");
  return PointerGetDatum(id);
}

// The key of a 128-bit mask: the key_id argument n, or the active key when it is NULL.
int key_arg(FunctionCallInfo fcinfo, MaskKeyring &ring, int n) {
  if (PG_NARGS() <= n || PG_ARGISNULL(n)) return ring.active_id();
  const int32 id = PG_GETARG_INT32(n);
  if (!ring.has(id)) {
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("no mask key has the id %d", id),
             errhint("snowflake_status() shows the keys loaded, to roles with pg_monitor.")));
  }
  return id;
}

Datum uuid_mask(FunctionCallInfo fcinfo, MaskKeyring::Facade facade, const char *name,
                bool unmask_it) {
  const pg_uuid_t *in = PG_GETARG_UUID_P(0);
  const int version = in->data[6] >> 4;
  const int want = unmask_it ? 4 : 7;
  if (version != want || (in->data[8] & 0xc0) != 0x80) {
    const char *mask_name = facade == MaskKeyring::Facade::kUuidv7 ? "uuidv7_mask" : "uuidv47_mask";
    if (version != want) {
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("%s() takes a version %d UUID, not version %d", name, want, version),
                      unmask_it ? errdetail("%s() makes version 4 UUIDs.", mask_name)
                                : errdetail("Only a UUIDv7's time is masked.")));
    }
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s() takes an RFC 9562 UUID, not one of variant bits %d%d", name,
                           in->data[8] >> 7, (in->data[8] >> 6) & 1),
                    errdetail("Its 17th hex digit is 8, 9, a or b.")));
  }
  MaskKeyring &ring = mask_keyring();
  pg_uuid_t *out = static_cast<pg_uuid_t *>(palloc(sizeof(pg_uuid_t)));
  if (!ring.uuid_mask(key_arg(fcinfo, ring, 1), facade, in->data, out->data, unmask_it))
    cipher_failed();
  PG_RETURN_UUID_P(out);
}

Datum ulid_mask_datum(FunctionCallInfo fcinfo, bool unmask_it) {
  const uint8_t *in = reinterpret_cast<const uint8_t *>(DatumGetPointer(PG_GETARG_DATUM(0)));
  MaskKeyring &ring = mask_keyring();
  uint8_t *out = static_cast<uint8_t *>(palloc(16));
  if (!ring.ulid_mask(key_arg(fcinfo, ring, 1), in, out, unmask_it)) cipher_failed();
  return PointerGetDatum(out);
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_mask) {
  // PG_NARGS(): a catalog made by another build may declare fewer arguments.
  if (PG_NARGS() < 2) return mask(fcinfo, kNoPrefix);
  return mask(fcinfo, prefix_arg(fcinfo, 1));
}

// The token must carry the prefix given, none without one.
SNOWFLAKE_FUNCTION(snowflake_unmask) {
  if (PG_NARGS() < 2) return unmask(fcinfo, kNoPrefix);
  return unmask(fcinfo, prefix_arg(fcinfo, 1));
}

// As snowflake_mask/unmask, for a sno: the token's form and prefix rules are the same.
SNOWFLAKE_FUNCTION(sno_mask) {
  if (PG_NARGS() < 2) return sno_mask_datum(fcinfo, kNoPrefix);
  return sno_mask_datum(fcinfo, prefix_arg(fcinfo, 1));
}

SNOWFLAKE_FUNCTION(sno_unmask) {
  if (PG_NARGS() < 2) return sno_unmask_datum(fcinfo, kNoPrefix);
  return sno_unmask_datum(fcinfo, prefix_arg(fcinfo, 1));
}

// Not STRICT: a NULL key id (the default) is the active key's.
SNOWFLAKE_FUNCTION(uuidv7_mask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return uuid_mask(fcinfo, MaskKeyring::Facade::kUuidv7, "uuidv7_mask", false);
}
SNOWFLAKE_FUNCTION(uuidv7_unmask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return uuid_mask(fcinfo, MaskKeyring::Facade::kUuidv7, "uuidv7_unmask", true);
}
SNOWFLAKE_FUNCTION(uuidv47_mask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return uuid_mask(fcinfo, MaskKeyring::Facade::kUuidv47, "uuidv47_mask", false);
}
SNOWFLAKE_FUNCTION(uuidv47_unmask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return uuid_mask(fcinfo, MaskKeyring::Facade::kUuidv47, "uuidv47_unmask", true);
}
SNOWFLAKE_FUNCTION(ulid_mask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return ulid_mask_datum(fcinfo, false);
}
SNOWFLAKE_FUNCTION(ulid_unmask) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  return ulid_mask_datum(fcinfo, true);
}
