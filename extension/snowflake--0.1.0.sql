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

-- uuidv7 (RFC 9562 version 7 on the built-in uuid type)

CREATE FUNCTION uuidv7() RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7_at_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uuid_version(id uuid) RETURNS integer
	AS 'MODULE_PATHNAME', 'snowflake_uuid_version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_at(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ulid type

CREATE TYPE ulid;

CREATE FUNCTION ulid_in(cstring) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_out(ulid) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_recv(internal) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_send(ulid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE ulid (
	INPUT = ulid_in,
	OUTPUT = ulid_out,
	RECEIVE = ulid_recv,
	SEND = ulid_send,
	INTERNALLENGTH = 16,
	ALIGNMENT = char,
	STORAGE = plain
);

-- ulid functions

CREATE FUNCTION ulid() RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid(ts timestamptz) RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_generate_at_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_timestamp(id ulid) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_at(ts timestamptz) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_to_bytea(ulid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bytea_to_ulid(bytea) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ulid casts

-- a ulid and a uuid are the same 16 bytes: no conversion work
CREATE CAST (ulid AS uuid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (uuid AS ulid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (ulid AS text) WITH INOUT AS ASSIGNMENT;
CREATE CAST (text AS ulid) WITH INOUT AS ASSIGNMENT;
CREATE CAST (ulid AS bytea) WITH FUNCTION ulid_to_bytea(ulid);
CREATE CAST (bytea AS ulid) WITH FUNCTION bytea_to_ulid(bytea);
CREATE CAST (ulid AS timestamptz) WITH FUNCTION ulid_timestamp(ulid);
CREATE CAST (timestamptz AS ulid) WITH FUNCTION ulid_at(timestamptz);

-- ulid operators

CREATE FUNCTION ulid_eq(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_ne(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_lt(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_le(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_gt(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_ge(ulid, ulid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_cmp(ulid, ulid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_hash(ulid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ulid_hash_extended(ulid, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_eq,
	COMMUTATOR = OPERATOR(=), NEGATOR = OPERATOR(<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_ne,
	COMMUTATOR = OPERATOR(<>), NEGATOR = OPERATOR(=),
	RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR < (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_lt,
	COMMUTATOR = OPERATOR(>), NEGATOR = OPERATOR(>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE OPERATOR <= (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_le,
	COMMUTATOR = OPERATOR(>=), NEGATOR = OPERATOR(>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE OPERATOR > (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_gt,
	COMMUTATOR = OPERATOR(<), NEGATOR = OPERATOR(<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE OPERATOR >= (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_ge,
	COMMUTATOR = OPERATOR(<=), NEGATOR = OPERATOR(<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-- ulid aggregates

CREATE FUNCTION ulid_smaller(ulid, ulid) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_larger(ulid, ulid) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(ulid) (
	SFUNC = ulid_smaller, STYPE = ulid, COMBINEFUNC = ulid_smaller, SORTOP = <, PARALLEL = SAFE
);

CREATE AGGREGATE max(ulid) (
	SFUNC = ulid_larger, STYPE = ulid, COMBINEFUNC = ulid_larger, SORTOP = >, PARALLEL = SAFE
);

-- ulid opclasses

CREATE OPERATOR CLASS ulid_ops DEFAULT FOR TYPE ulid USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 ulid_cmp(ulid, ulid),
	FUNCTION 2 ulid_sortsupport(internal),
	FUNCTION 4 pg_catalog.btequalimage(oid);

CREATE OPERATOR CLASS ulid_hash_ops DEFAULT FOR TYPE ulid USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 ulid_hash(ulid),
	FUNCTION 2 ulid_hash_extended(ulid, bigint);

CREATE OPERATOR CLASS ulid_minmax_ops DEFAULT FOR TYPE ulid USING brin AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 pg_catalog.brin_minmax_opcinfo(internal),
	FUNCTION 2 pg_catalog.brin_minmax_add_value(internal, internal, internal, internal),
	FUNCTION 3 pg_catalog.brin_minmax_consistent(internal, internal, internal),
	FUNCTION 4 pg_catalog.brin_minmax_union(internal, internal, internal);

-- observability

CREATE FUNCTION snowflake_status(
	OUT kind text, OUT shard integer, OUT last_ts timestamptz, OUT last_seq bigint,
	OUT lead_ms bigint, OUT clock_steps_back bigint, OUT clock_steps_forward bigint,
	OUT lead_waits bigint, OUT reserved_until timestamptz, OUT reservation_writes bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'snowflake_status' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
