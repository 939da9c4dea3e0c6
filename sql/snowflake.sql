-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- snowflake generators

CREATE FUNCTION snowflake() RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_next' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake(shard integer) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_next_shard' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- snowflake decoding (the time depends on snowflake.epoch, fixed at server start)

CREATE FUNCTION snowflake_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
	AS 'MODULE_PATHNAME', 'snowflake_decode' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'snowflake_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_shard(id bigint) RETURNS integer
	AS 'MODULE_PATHNAME', 'snowflake_shard' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_seq(id bigint) RETURNS integer
	AS 'MODULE_PATHNAME', 'snowflake_seq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- snowflake time bounds

CREATE FUNCTION snowflake_at(ts timestamptz) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_at' LANGUAGE C STABLE STRICT PARALLEL SAFE;
