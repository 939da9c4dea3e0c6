// Every difference between the PostgreSQL majors the extension supports (15 to 19), in one
// place. Included by pg.hpp right after postgres.h, inside its extern "C" block.
#pragma once

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later"
#endif

// 16 moved the varlena macros (SET_VARSIZE, VARDATA, VARSIZE_ANY_EXHDR) out of postgres.h.
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

// 16 keeps settings' memory in a context of its own: a setting's "extra" comes from
// guc_malloc; before, from malloc (which 15's GUC code frees with free()).
#if PG_VERSION_NUM >= 160000
#define SNOWFLAKE_GUC_MALLOC(size) guc_malloc(LOG, size)
#else
#define SNOWFLAKE_GUC_MALLOC(size) malloc(size)
#endif

// 15.0 named InitMaterializedSRF SetSingleFuncCall (renamed in 15.1).
#if PG_VERSION_NUM < 150001
#define InitMaterializedSRF SetSingleFuncCall
#endif

// 16 lets a type's input function report bad input softly (pg_input_is_valid()); before,
// every bad input is an ERROR.
#if PG_VERSION_NUM >= 160000
#define SNOWFLAKE_ERETURN(context, dummy, rest) ereturn(context, dummy, rest)
#else
#define SNOWFLAKE_ERETURN(context, dummy, rest) ereport(ERROR, rest)
#endif

// 16 keeps the settings in a hash table and hands out a sorted array of them, counted; before,
// the array itself, counted apart.
#if PG_VERSION_NUM >= 160000
#define SNOWFLAKE_GUC_VARIABLES(count) get_guc_variables(count)
#else
#define SNOWFLAKE_GUC_VARIABLES(count) (*(count) = GetNumConfigOptions(), get_guc_variables())
#endif

// 17 gives extensions named wait events; before, every wait of an extension is "Extension".
#if PG_VERSION_NUM >= 170000
#define SNOWFLAKE_NAMED_WAIT_EVENTS 1
#endif

// 18 records the extension's name and version in the module's magic block, which
// pg_get_loaded_modules() shows.
#if PG_VERSION_NUM >= 180000
#define SNOWFLAKE_MODULE_MAGIC \
  PG_MODULE_MAGIC_EXT(.name = "snowflake", .version = SNOWFLAKE_VERSION)
#else
#define SNOWFLAKE_MODULE_MAGIC PG_MODULE_MAGIC
#endif

// 19 renamed the replication origin's type and keeps the session's origin in a struct.
#if PG_VERSION_NUM >= 190000
#define SNOWFLAKE_APPLYING_ORIGIN (replorigin_xact_state.origin)
#define SnowflakeOriginId ReplOriginId
#else
#define SNOWFLAKE_APPLYING_ORIGIN replorigin_session_origin
#define SnowflakeOriginId RepOriginId
#endif

// The custom WAL resource manager that carries the reservation (15 and later have custom
// resource managers). PostgreSQL keeps 128 (RM_EXPERIMENTAL_ID) for development; IDs 129 to
// 255 are for extensions, coordinated on PostgreSQL's wiki page of custom WAL resource
// managers. 219 is the extension's: should another preloaded module hold it, the server
// says so at start ("failed to register custom resource manager"), and this one constant
// changes.
#define SNOWFLAKE_RMGR_ID 219
