// The C symbols of earlier releases. 0.1.0's install script names them (every older version
// is installed through it), and so does the catalog of a database not yet updated to 1.0.0
// (its functions keep the symbol they were created with until ALTER EXTENSION snowflake
// UPDATE). Each old name calls the function that carries the 1.0.0 name; the library is
// linked -Bsymbolic (Makefile), so that call reaches this library's function even where
// another loaded library exports the same name.
#include "../core/id128.hpp"

#include "pg.hpp"

extern "C" {
#include "utils/uuid.h"
}

// An exported old_name that calls new_name (defined with SNOWFLAKE_FUNCTION elsewhere). The
// call carries no C++ object, so new_name's own wrapper is the only one needed.
#define SNOWFLAKE_LEGACY_SYMBOL(old_name, new_name)                                  \
  extern "C" {                                                                       \
  PGDLLEXPORT Datum new_name(PG_FUNCTION_ARGS);                                      \
  PG_FUNCTION_INFO_V1(old_name);                                                     \
  PGDLLEXPORT Datum old_name(PG_FUNCTION_ARGS) { return new_name(fcinfo); }          \
  }

// 0.1.0 to 0.3.0: snowflake(), snowflake(shard).
SNOWFLAKE_LEGACY_SYMBOL(snowflake_next, snowflake_generate)
SNOWFLAKE_LEGACY_SYMBOL(snowflake_next_shard, snowflake_generate_shard)
// 0.1.0 to 0.3.0: uuidv7_from_time(ts), uuidv7_at(ts), uuidv7_timestamp(uuid).
SNOWFLAKE_LEGACY_SYMBOL(snowflake_uuidv7_at_time, uuidv7_from_time)
SNOWFLAKE_LEGACY_SYMBOL(snowflake_uuidv7_at, uuidv7_at)
SNOWFLAKE_LEGACY_SYMBOL(snowflake_uuidv7_timestamp, uuidv7_timestamp)
// 0.1.0 to 0.3.0: ulid(ts), which 1.0.0 renames ulid_from_time(ts).
SNOWFLAKE_LEGACY_SYMBOL(ulid_generate_at_time, ulid_from_time)

// 0.1.0 to 0.3.0: uuid_version(uuid), dropped in 1.0.0 (core has uuid_extract_version() on
// 17 and later). Kept for 0.1.0's install script and the upgrade path through it.
SNOWFLAKE_FUNCTION(snowflake_uuid_version) {
  const int version = snowflake::uuid_version(PG_GETARG_UUID_P(0)->data);
  if (version < 0) PG_RETURN_NULL();
  return Int32GetDatum(version);
}
