// TypeID text over PostgreSQL's uuid: typeid(prefix, id) writes one, typeid_uuid() and
// typeid_prefix() read one back. Every text is checked whole, as the specification's
// invalid.yml wants; a broken rule is a 22P02 ERROR whose DETAIL names it.
#include "core/typeid_codec.hpp"

#include "glue/pg.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/uuid.h"
}

namespace {

using namespace snowflake;

const char *rule_broken(TypeidProblem p) {
  switch (p) {
    case TypeidProblem::kPrefixUppercase:
      return "A TypeID prefix is in lower case: only the letters a-z and underscores.";
    case TypeidProblem::kPrefixBadCharacter:
      return "A TypeID prefix has only the letters a-z and underscores.";
    case TypeidProblem::kPrefixStartsWithUnderscore:
      return "A TypeID prefix may not start with an underscore.";
    case TypeidProblem::kPrefixEndsWithUnderscore:
      return "A TypeID prefix may not end with an underscore.";
    case TypeidProblem::kPrefixTooLong:
      return "A TypeID prefix is at most 63 characters.";
    case TypeidProblem::kSeparatorWithoutPrefix:
      return "A TypeID with an empty prefix has no underscore: it is the 26-character suffix "
             "alone.";
    case TypeidProblem::kSuffixBadLength:
      return "A TypeID suffix is 26 characters: all that follows the last underscore, or the "
             "whole TypeID when it has no prefix.";
    case TypeidProblem::kSuffixUppercase:
      return "A TypeID suffix is in lower case.";
    case TypeidProblem::kSuffixBadCharacter:
      return "A TypeID suffix has only the characters 0-9 and a-z without i, l, o and u.";
    case TypeidProblem::kSuffixOverflow:
      return "The first character of a TypeID suffix is at most 7 (the suffix holds 128 bits).";
    case TypeidProblem::kOk:
      break;
  }
  return "";
}

[[noreturn]] pg_noinline void raise_bad_typeid(TypeidProblem p, const text *in) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid input syntax for TypeID: \"%s\"", text_to_cstring(in)),
                  errdetail("%s", rule_broken(p))));
  pg_unreachable();
}

[[noreturn]] pg_noinline void raise_bad_prefix(TypeidProblem p, const text *in) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid TypeID prefix: \"%s\"", text_to_cstring(in)),
                  errdetail("%s", rule_broken(p))));
  pg_unreachable();
}

struct ParsedTypeid {
  size_t prefix_len;
  pg_uuid_t uuid;
};

ParsedTypeid decode_arg(FunctionCallInfo fcinfo) {
  const text *in = PG_GETARG_TEXT_PP(0);
  ParsedTypeid d;
  const TypeidProblem p =
      typeid_decode(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), &d.prefix_len, d.uuid.data);
  if (unlikely(p != TypeidProblem::kOk)) raise_bad_typeid(p, in);
  return d;
}

}  // namespace

// The C symbol is not the SQL name: typeid is a C++ keyword.
SNOWFLAKE_FUNCTION(typeid_compose) {
  const text *prefix = PG_GETARG_TEXT_PP(0);
  const pg_uuid_t *id = PG_GETARG_UUID_P(1);
  char out[kTypeidMaxLen];
  size_t len = 0;
  const TypeidProblem p =
      typeid_encode(VARDATA_ANY(prefix), VARSIZE_ANY_EXHDR(prefix), id->data, out, &len);
  if (unlikely(p != TypeidProblem::kOk)) raise_bad_prefix(p, prefix);
  PG_RETURN_TEXT_P(cstring_to_text_with_len(out, static_cast<int>(len)));
}

SNOWFLAKE_FUNCTION(typeid_uuid) {
  const ParsedTypeid d = decode_arg(fcinfo);
  pg_uuid_t *u = static_cast<pg_uuid_t *>(palloc(sizeof(pg_uuid_t)));
  *u = d.uuid;
  PG_RETURN_UUID_P(u);
}

SNOWFLAKE_FUNCTION(typeid_prefix) {
  const ParsedTypeid d = decode_arg(fcinfo);
  const text *in = PG_GETARG_TEXT_PP(0);
  PG_RETURN_TEXT_P(cstring_to_text_with_len(VARDATA_ANY(in), static_cast<int>(d.prefix_len)));
}
