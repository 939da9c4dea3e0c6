-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.2.0'" to load this file. \quit

-- The UUIDv7 generator takes a name that no PostgreSQL version has in pg_catalog. Renamed,
-- not dropped and created: every column DEFAULT and view that called uuidv7() or
-- uuidv7(timestamptz) of 0.1.0 keeps working and now reads snowflake_uuidv7() or
-- uuidv7_from_time(). Qualified by the extension's schema, since on PostgreSQL 18 and later
-- an unqualified uuidv7() is pg_catalog's.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION %I.uuidv7() RENAME TO snowflake_uuidv7', current_schema());
  EXECUTE format('ALTER FUNCTION %I.uuidv7(timestamptz) RENAME TO uuidv7_from_time',
                 current_schema());
END
$$;

CREATE FUNCTION snowflake_uuidv7(shift interval) RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7_shift' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
