-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- snowflake generators

CREATE FUNCTION snowflake() RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake(shard integer) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_generate_shard' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The shard is what keeps servers' IDs apart, and snowflake.shard_id is the superuser's to
-- set: issuing on any other shard needs a grant given on purpose, by the extension's owner
-- (who, after a database owner's CREATE EXTENSION of this trusted extension, owns none of
-- its objects: the bootstrap superuser does).
REVOKE ALL ON FUNCTION snowflake(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake(integer) TO @extowner@ WITH GRANT OPTION;

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

-- snowflake time with the epoch as an argument: no setting is read, so these are IMMUTABLE,
-- as partition keys, plan-time partition pruning and expression indexes need

CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'snowflake_timestamp_epoch' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_at(ts timestamptz, epoch timestamptz) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_at_epoch' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- other systems' 64-bit IDs: the same decode and bounds, by layout name (IMMUTABLE: a
-- layout is a constant)

CREATE FUNCTION snowflake_decode(id bigint, layout text, OUT ts timestamptz, OUT shard integer, OUT seq integer)
	AS 'MODULE_PATHNAME', 'snowflake_decode_layout' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_at(ts timestamptz, layout text) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_at_layout' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_timestamp(id text) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'objectid_timestamp_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_timestamp(id bytea) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'objectid_timestamp_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- other systems' IDs with each system's own fields: Twitter's and Discord's node is two
-- fields, and snowflake_decode(id, layout) gives it as one shard

CREATE FUNCTION twitter_decode(id bigint, OUT ts timestamptz, OUT datacenter integer, OUT worker integer, OUT seq integer)
	AS 'MODULE_PATHNAME', 'twitter_decode' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION discord_decode(id bigint, OUT ts timestamptz, OUT worker integer, OUT process integer, OUT increment integer)
	AS 'MODULE_PATHNAME', 'discord_decode' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sonyflake_decode(id bigint, OUT ts timestamptz, OUT machine integer, OUT seq integer)
	AS 'MODULE_PATHNAME', 'sonyflake_decode' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION pgedge_decode(id bigint, layout text DEFAULT 'pgedge', OUT ts timestamptz, OUT node integer, OUT count integer)
	AS 'MODULE_PATHNAME', 'pgedge_decode' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_decode(id text, OUT ts timestamptz, OUT random bytea, OUT counter integer)
	AS 'MODULE_PATHNAME', 'objectid_decode_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION objectid_decode(id bytea, OUT ts timestamptz, OUT random bytea, OUT counter integer)
	AS 'MODULE_PATHNAME', 'objectid_decode_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- uuidv7 (RFC 9562 version 7 on the built-in uuid type)
-- The generator is snowflake_uuidv7() on every server version: PostgreSQL 18 and later have
-- pg_catalog.uuidv7() and pg_catalog.uuidv7(interval), which pg_catalog's place at the head
-- of every search path would make win over functions of ours with those names.

CREATE FUNCTION snowflake_uuidv7() RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_uuidv7(shift interval) RETURNS uuid
	AS 'MODULE_PATHNAME', 'snowflake_uuidv7_shift' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Core's names, so that code written for PostgreSQL 18 runs on 15 to 17: uuidv7() and
-- uuidv7(interval) (core's from 18), uuid_extract_version(uuid) and uuid_extract_timestamp(uuid)
-- (core's from 17), with core's signatures and PostgreSQL 18's results, ours beneath (uuidv7()
-- is snowflake_uuidv7(): server-wide order, durable). Declared in the extension's schema on
-- every version, where that schema has none of the name and arguments (a uuidv7() of the
-- user's own stays, and the install works): where core has one, pg_catalog comes first in
-- every search path that does not name it later, so a bare call is core's, and a dump of 15 to
-- 17, whose defaults name ours with its schema (DEFAULT public.uuidv7()), restores on 18.
DO $core_names$
BEGIN
	IF to_regprocedure(format('%I.uuidv7()', current_schema())) IS NULL THEN
		CREATE FUNCTION uuidv7() RETURNS uuid
			AS 'MODULE_PATHNAME', 'snowflake_uuidv7' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
		EXECUTE format('COMMENT ON FUNCTION %I.uuidv7() IS %L', current_schema(),
			'core''s uuidv7() of PostgreSQL 18 under the extension''s schema (a bare call is core''s from 18): a new RFC 9562 version 7 UUID, snowflake_uuidv7() (strictly increasing across the server, durable), with its errors');
	END IF;
	IF to_regprocedure(format('%I.uuidv7(interval)', current_schema())) IS NULL THEN
		CREATE FUNCTION uuidv7(shift interval) RETURNS uuid
			AS 'MODULE_PATHNAME', 'snowflake_uuidv7_shift' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
		EXECUTE format('COMMENT ON FUNCTION %I.uuidv7(interval) IS %L', current_schema(),
			'core''s uuidv7(interval) of PostgreSQL 18 under the extension''s schema (a bare call is core''s from 18): a version 7 UUID at the clock shifted by the interval, snowflake_uuidv7(interval); 22008 for a time outside 1970 to 10889');
	END IF;
	IF to_regprocedure(format('%I.uuid_extract_version(uuid)', current_schema())) IS NULL THEN
		CREATE FUNCTION uuid_extract_version(uuid) RETURNS smallint
			AS 'MODULE_PATHNAME', 'snowflake_uuid_extract_version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
		EXECUTE format('COMMENT ON FUNCTION %I.uuid_extract_version(uuid) IS %L', current_schema(),
			'core''s uuid_extract_version(uuid) of PostgreSQL 17 under the extension''s schema (a bare call is core''s from 17): the version field (RFC 9562, section 4.2), NULL for a variant other than RFC 9562''s');
	END IF;
	IF to_regprocedure(format('%I.uuid_extract_timestamp(uuid)', current_schema())) IS NULL THEN
		CREATE FUNCTION uuid_extract_timestamp(uuid) RETURNS timestamptz
			AS 'MODULE_PATHNAME', 'snowflake_uuid_extract_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
		EXECUTE format('COMMENT ON FUNCTION %I.uuid_extract_timestamp(uuid) IS %L', current_schema(),
			'core''s uuid_extract_timestamp(uuid) with PostgreSQL 18''s results, under the extension''s schema (a bare call is core''s from 17, which on 17 gives NULL for version 7): the time of a version 1 UUID (to the microsecond) or a version 7 UUID (to the millisecond), RFC 9562; NULL for other versions and variants');
	END IF;
END
$core_names$;

CREATE FUNCTION uuidv7_from_time(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_from_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uuidv7_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_at(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

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

CREATE FUNCTION ulid_from_time(ts timestamptz) RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_from_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

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

-- ulid beside uuid: the same 16 bytes in the same order, so a ulid is compared with a uuid (a
-- driver's uuid parameter) in either order, through the ulid column's btree and hash indexes.
-- The functions are ulid's own (both types are 16 bytes passed by reference); uuid's own
-- operators join the families, which then hold every pair of the two types.

CREATE FUNCTION ulid_eq(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_ne(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_lt(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_le(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_gt(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_ge(ulid, uuid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_cmp(ulid, uuid) RETURNS integer AS 'MODULE_PATHNAME', 'ulid_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_eq(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_ne(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_lt(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_le(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_gt(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_ge(uuid, ulid) RETURNS bool AS 'MODULE_PATHNAME', 'ulid_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION ulid_cmp(uuid, ulid) RETURNS integer AS 'MODULE_PATHNAME', 'ulid_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_eq, COMMUTATOR = OPERATOR(=),
	NEGATOR = OPERATOR(<>), RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_ne, COMMUTATOR = OPERATOR(<>),
	NEGATOR = OPERATOR(=), RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_lt, COMMUTATOR = OPERATOR(>),
	NEGATOR = OPERATOR(>=), RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_le, COMMUTATOR = OPERATOR(>=),
	NEGATOR = OPERATOR(>), RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_gt, COMMUTATOR = OPERATOR(<),
	NEGATOR = OPERATOR(<=), RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_ge, COMMUTATOR = OPERATOR(<=),
	NEGATOR = OPERATOR(<), RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR = (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_eq, COMMUTATOR = OPERATOR(=),
	NEGATOR = OPERATOR(<>), RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_ne, COMMUTATOR = OPERATOR(<>),
	NEGATOR = OPERATOR(=), RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_lt, COMMUTATOR = OPERATOR(>),
	NEGATOR = OPERATOR(>=), RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_le, COMMUTATOR = OPERATOR(>=),
	NEGATOR = OPERATOR(>), RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_gt, COMMUTATOR = OPERATOR(<),
	NEGATOR = OPERATOR(<=), RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = ulid_ge, COMMUTATOR = OPERATOR(<=),
	NEGATOR = OPERATOR(<), RESTRICT = scalargesel, JOIN = scalargejoinsel);

ALTER OPERATOR FAMILY ulid_ops USING btree ADD
	OPERATOR 1 < (ulid, uuid), OPERATOR 2 <= (ulid, uuid), OPERATOR 3 = (ulid, uuid),
	OPERATOR 4 >= (ulid, uuid), OPERATOR 5 > (ulid, uuid),
	FUNCTION 1 (ulid, uuid) ulid_cmp(ulid, uuid),
	OPERATOR 1 < (uuid, ulid), OPERATOR 2 <= (uuid, ulid), OPERATOR 3 = (uuid, ulid),
	OPERATOR 4 >= (uuid, ulid), OPERATOR 5 > (uuid, ulid),
	FUNCTION 1 (uuid, ulid) ulid_cmp(uuid, ulid),
	OPERATOR 1 pg_catalog.< (uuid, uuid), OPERATOR 2 pg_catalog.<= (uuid, uuid),
	OPERATOR 3 pg_catalog.= (uuid, uuid), OPERATOR 4 pg_catalog.>= (uuid, uuid),
	OPERATOR 5 pg_catalog.> (uuid, uuid),
	FUNCTION 1 (uuid, uuid) pg_catalog.uuid_cmp(uuid, uuid),
	FUNCTION 2 (uuid, uuid) pg_catalog.uuid_sortsupport(internal);

-- ulid_hash and uuid_hash hash the same 16 bytes alike (hash_any), as a family needs.
ALTER OPERATOR FAMILY ulid_hash_ops USING hash ADD
	OPERATOR 1 = (ulid, uuid), OPERATOR 1 = (uuid, ulid), OPERATOR 1 pg_catalog.= (uuid, uuid),
	FUNCTION 1 (uuid, uuid) pg_catalog.uuid_hash(uuid),
	FUNCTION 2 (uuid, uuid) pg_catalog.uuid_hash_extended(uuid, bigint);

-- sno type (github.com/muyo/sno): 10 bytes, 16 characters of [2-9a-x] as text

CREATE TYPE sno;

CREATE FUNCTION sno_in(cstring) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_out(sno) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_recv(internal) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_send(sno) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE sno (
	INPUT = sno_in,
	OUTPUT = sno_out,
	RECEIVE = sno_recv,
	SEND = sno_send,
	INTERNALLENGTH = 10,
	ALIGNMENT = char,
	STORAGE = plain
);

-- sno generator: the server-wide sno stream, on the partition of the server's shard

CREATE FUNCTION sno(meta integer DEFAULT 0) RETURNS sno
	AS 'MODULE_PATHNAME', 'sno_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- sno functions

CREATE FUNCTION sno_decode(id sno, OUT ts timestamptz, OUT meta integer, OUT partition integer,
	OUT sequence integer, OUT tick boolean)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_timestamp(id sno) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_at(ts timestamptz) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_to_bytea(sno) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bytea_to_sno(bytea) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- sno casts

CREATE CAST (sno AS bytea) WITH FUNCTION sno_to_bytea(sno);
-- AS ASSIGNMENT: a client that sends bytes as bytea (psycopg, a query's $1::bytea) can store
-- them in a sno column. Not implicit: bytea would then reach every function and operator of
-- sno (min(bytea) would become min(sno)).
CREATE CAST (bytea AS sno) WITH FUNCTION bytea_to_sno(bytea) AS ASSIGNMENT;

-- sno operators

CREATE FUNCTION sno_eq(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_ne(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_lt(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_le(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_gt(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_ge(sno, sno) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_cmp(sno, sno) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_hash(sno) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION sno_hash_extended(sno, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_eq,
	COMMUTATOR = OPERATOR(=), NEGATOR = OPERATOR(<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_ne,
	COMMUTATOR = OPERATOR(<>), NEGATOR = OPERATOR(=),
	RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR < (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_lt,
	COMMUTATOR = OPERATOR(>), NEGATOR = OPERATOR(>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE OPERATOR <= (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_le,
	COMMUTATOR = OPERATOR(>=), NEGATOR = OPERATOR(>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE OPERATOR > (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_gt,
	COMMUTATOR = OPERATOR(<), NEGATOR = OPERATOR(<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE OPERATOR >= (
	LEFTARG = sno, RIGHTARG = sno, PROCEDURE = sno_ge,
	COMMUTATOR = OPERATOR(<=), NEGATOR = OPERATOR(<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-- sno opclasses

CREATE OPERATOR CLASS sno_ops DEFAULT FOR TYPE sno USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 sno_cmp(sno, sno),
	FUNCTION 2 sno_sortsupport(internal),
	FUNCTION 4 pg_catalog.btequalimage(oid);

CREATE OPERATOR CLASS sno_hash_ops DEFAULT FOR TYPE sno USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 sno_hash(sno),
	FUNCTION 2 sno_hash_extended(sno, bigint);

CREATE OPERATOR CLASS sno_minmax_ops DEFAULT FOR TYPE sno USING brin AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 pg_catalog.brin_minmax_opcinfo(internal),
	FUNCTION 2 pg_catalog.brin_minmax_add_value(internal, internal, internal, internal),
	FUNCTION 3 pg_catalog.brin_minmax_consistent(internal, internal, internal),
	FUNCTION 4 pg_catalog.brin_minmax_union(internal, internal, internal);

-- sno aggregates

CREATE FUNCTION sno_smaller(sno, sno) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_larger(sno, sno) RETURNS sno
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(sno) (
	SFUNC = sno_smaller, STYPE = sno, COMBINEFUNC = sno_smaller, SORTOP = <, PARALLEL = SAFE
);

CREATE AGGREGATE max(sno) (
	SFUNC = sno_larger, STYPE = sno, COMBINEFUNC = sno_larger, SORTOP = >, PARALLEL = SAFE
);

-- rsxid type (github.com/rs/xid; PostgreSQL's own xid is a transaction id): 12 bytes, 20
-- characters of lower-case base32hex as text. The decoders also take an xid kept as text or
-- as bytes; for a literal, the text form (a string type) wins over the type, without
-- ambiguity, and reads it alike.

CREATE TYPE rsxid;

CREATE FUNCTION rsxid_in(cstring) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_out(rsxid) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_recv(internal) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_send(rsxid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE rsxid (
	INPUT = rsxid_in,
	OUTPUT = rsxid_out,
	RECEIVE = rsxid_recv,
	SEND = rsxid_send,
	INTERNALLENGTH = 12,
	ALIGNMENT = char,
	STORAGE = plain
);

-- rsxid functions

CREATE FUNCTION rsxid_decode(id rsxid, OUT ts timestamptz, OUT machine bytea, OUT pid integer,
	OUT counter integer)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_decode(id text, OUT ts timestamptz, OUT machine bytea, OUT pid integer,
	OUT counter integer)
	AS 'MODULE_PATHNAME', 'rsxid_decode_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_decode(id bytea, OUT ts timestamptz, OUT machine bytea, OUT pid integer,
	OUT counter integer)
	AS 'MODULE_PATHNAME', 'rsxid_decode_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_timestamp(id rsxid) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_timestamp(id text) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'rsxid_timestamp_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_at(ts timestamptz) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_to_bytea(rsxid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bytea_to_rsxid(bytea) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- rsxid casts: bytea as sno's (an assignment cast to rsxid, never implicit); text as ulid's

CREATE CAST (rsxid AS bytea) WITH FUNCTION rsxid_to_bytea(rsxid);
CREATE CAST (bytea AS rsxid) WITH FUNCTION bytea_to_rsxid(bytea) AS ASSIGNMENT;
CREATE CAST (rsxid AS text) WITH INOUT AS ASSIGNMENT;
CREATE CAST (text AS rsxid) WITH INOUT AS ASSIGNMENT;

-- rsxid operators

CREATE FUNCTION rsxid_eq(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_ne(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_lt(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_le(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_gt(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_ge(rsxid, rsxid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_cmp(rsxid, rsxid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_hash(rsxid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION rsxid_hash_extended(rsxid, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_eq,
	COMMUTATOR = OPERATOR(=), NEGATOR = OPERATOR(<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_ne,
	COMMUTATOR = OPERATOR(<>), NEGATOR = OPERATOR(=),
	RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR < (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_lt,
	COMMUTATOR = OPERATOR(>), NEGATOR = OPERATOR(>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE OPERATOR <= (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_le,
	COMMUTATOR = OPERATOR(>=), NEGATOR = OPERATOR(>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE OPERATOR > (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_gt,
	COMMUTATOR = OPERATOR(<), NEGATOR = OPERATOR(<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE OPERATOR >= (
	LEFTARG = rsxid, RIGHTARG = rsxid, PROCEDURE = rsxid_ge,
	COMMUTATOR = OPERATOR(<=), NEGATOR = OPERATOR(<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-- rsxid opclasses

CREATE OPERATOR CLASS rsxid_ops DEFAULT FOR TYPE rsxid USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 rsxid_cmp(rsxid, rsxid),
	FUNCTION 2 rsxid_sortsupport(internal),
	FUNCTION 4 pg_catalog.btequalimage(oid);

CREATE OPERATOR CLASS rsxid_hash_ops DEFAULT FOR TYPE rsxid USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 rsxid_hash(rsxid),
	FUNCTION 2 rsxid_hash_extended(rsxid, bigint);

CREATE OPERATOR CLASS rsxid_minmax_ops DEFAULT FOR TYPE rsxid USING brin AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 pg_catalog.brin_minmax_opcinfo(internal),
	FUNCTION 2 pg_catalog.brin_minmax_add_value(internal, internal, internal, internal),
	FUNCTION 3 pg_catalog.brin_minmax_consistent(internal, internal, internal),
	FUNCTION 4 pg_catalog.brin_minmax_union(internal, internal, internal);

-- rsxid aggregates

CREATE FUNCTION rsxid_smaller(rsxid, rsxid) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION rsxid_larger(rsxid, rsxid) RETURNS rsxid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(rsxid) (
	SFUNC = rsxid_smaller, STYPE = rsxid, COMBINEFUNC = rsxid_smaller, SORTOP = <, PARALLEL = SAFE
);

CREATE AGGREGATE max(rsxid) (
	SFUNC = rsxid_larger, STYPE = rsxid, COMBINEFUNC = rsxid_larger, SORTOP = >, PARALLEL = SAFE
);

-- ksuid type (github.com/segmentio/ksuid): 20 bytes, 27 characters of base62 as text. The
-- decoders also take a KSUID kept as text (a literal resolves to that form, and reads alike).

CREATE TYPE ksuid;

CREATE FUNCTION ksuid_in(cstring) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_out(ksuid) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_recv(internal) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_send(ksuid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE ksuid (
	INPUT = ksuid_in,
	OUTPUT = ksuid_out,
	RECEIVE = ksuid_recv,
	SEND = ksuid_send,
	INTERNALLENGTH = 20,
	ALIGNMENT = char,
	STORAGE = plain
);

-- ksuid functions

CREATE FUNCTION ksuid_decode(id ksuid, OUT ts timestamptz, OUT payload bytea)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_decode(id text, OUT ts timestamptz, OUT payload bytea)
	AS 'MODULE_PATHNAME', 'ksuid_decode_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_timestamp(id ksuid) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_timestamp(id text) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'ksuid_timestamp_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_at(ts timestamptz) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_to_bytea(ksuid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bytea_to_ksuid(bytea) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ksuid casts: bytea as sno's (an assignment cast to ksuid, never implicit); text as ulid's

CREATE CAST (ksuid AS bytea) WITH FUNCTION ksuid_to_bytea(ksuid);
CREATE CAST (bytea AS ksuid) WITH FUNCTION bytea_to_ksuid(bytea) AS ASSIGNMENT;
CREATE CAST (ksuid AS text) WITH INOUT AS ASSIGNMENT;
CREATE CAST (text AS ksuid) WITH INOUT AS ASSIGNMENT;

-- ksuid operators

CREATE FUNCTION ksuid_eq(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_ne(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_lt(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_le(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_gt(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_ge(ksuid, ksuid) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_cmp(ksuid, ksuid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_hash(ksuid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION ksuid_hash_extended(ksuid, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_eq,
	COMMUTATOR = OPERATOR(=), NEGATOR = OPERATOR(<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);

CREATE OPERATOR <> (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_ne,
	COMMUTATOR = OPERATOR(<>), NEGATOR = OPERATOR(=),
	RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE OPERATOR < (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_lt,
	COMMUTATOR = OPERATOR(>), NEGATOR = OPERATOR(>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE OPERATOR <= (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_le,
	COMMUTATOR = OPERATOR(>=), NEGATOR = OPERATOR(>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE OPERATOR > (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_gt,
	COMMUTATOR = OPERATOR(<), NEGATOR = OPERATOR(<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE OPERATOR >= (
	LEFTARG = ksuid, RIGHTARG = ksuid, PROCEDURE = ksuid_ge,
	COMMUTATOR = OPERATOR(<=), NEGATOR = OPERATOR(<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-- ksuid opclasses

CREATE OPERATOR CLASS ksuid_ops DEFAULT FOR TYPE ksuid USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 ksuid_cmp(ksuid, ksuid),
	FUNCTION 2 ksuid_sortsupport(internal),
	FUNCTION 4 pg_catalog.btequalimage(oid);

CREATE OPERATOR CLASS ksuid_hash_ops DEFAULT FOR TYPE ksuid USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 ksuid_hash(ksuid),
	FUNCTION 2 ksuid_hash_extended(ksuid, bigint);

CREATE OPERATOR CLASS ksuid_minmax_ops DEFAULT FOR TYPE ksuid USING brin AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 pg_catalog.brin_minmax_opcinfo(internal),
	FUNCTION 2 pg_catalog.brin_minmax_add_value(internal, internal, internal, internal),
	FUNCTION 3 pg_catalog.brin_minmax_consistent(internal, internal, internal),
	FUNCTION 4 pg_catalog.brin_minmax_union(internal, internal, internal);

-- ksuid aggregates

CREATE FUNCTION ksuid_smaller(ksuid, ksuid) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid_larger(ksuid, ksuid) RETURNS ksuid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(ksuid) (
	SFUNC = ksuid_smaller, STYPE = ksuid, COMBINEFUNC = ksuid_smaller, SORTOP = <, PARALLEL = SAFE
);

CREATE AGGREGATE max(ksuid) (
	SFUNC = ksuid_larger, STYPE = ksuid, COMBINEFUNC = ksuid_larger, SORTOP = >, PARALLEL = SAFE
);

-- rsxid and ksuid generators: one server-wide stream per kind, of seconds and a counter, with the
-- server's shard in the xid's machine id and at the head of the KSUID's payload

CREATE FUNCTION rsxid() RETURNS rsxid
	AS 'MODULE_PATHNAME', 'rsxid_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION ksuid() RETURNS ksuid
	AS 'MODULE_PATHNAME', 'ksuid_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- TypeID (github.com/jetify-com/typeid, specification 0.3.0): a type prefix and a uuid as one
-- text, user_01h455vb4pex5vsknk084sn02q, in lower case only as the specification says. The
-- C symbol of typeid() is typeid_compose: typeid is a C++ keyword.

CREATE FUNCTION typeid(prefix text, id uuid) RETURNS text
	AS 'MODULE_PATHNAME', 'typeid_compose' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION typeid_uuid(id text) RETURNS uuid
	AS 'MODULE_PATHNAME', 'typeid_uuid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION typeid_prefix(id text) RETURNS text
	AS 'MODULE_PATHNAME', 'typeid_prefix' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- causal order across servers: after observing an ID from elsewhere, every ID issued here is
-- above it

CREATE FUNCTION snowflake_observe(id bigint) RETURNS void
	AS 'MODULE_PATHNAME', 'snowflake_observe' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_observe(id uuid) RETURNS void
	AS 'MODULE_PATHNAME', 'snowflake_observe_uuid' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_observe(id ulid) RETURNS void
	AS 'MODULE_PATHNAME', 'snowflake_observe_ulid' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_observe(id sno) RETURNS void
	AS 'MODULE_PATHNAME', 'snowflake_observe_sno' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- For replication's apply: observes a row's ID columns (the arguments; by default the primary
-- key), and counts what it may not observe instead of raising.
CREATE FUNCTION snowflake_observe_trigger() RETURNS trigger
	AS 'MODULE_PATHNAME', 'snowflake_observe_trigger' LANGUAGE C VOLATILE;

-- The same, and a row applied by replication whose snowflake ID has one of this server's own
-- shards, or whose sno has the partition this server issues snos on, is a shard collision
-- (snowflake.on_shard_collision).
CREATE FUNCTION snowflake_replica_guard() RETURNS trigger
	AS 'MODULE_PATHNAME', 'snowflake_replica_guard' LANGUAGE C VOLATILE;

-- Observing moves the IDs' time of every role of the server: a privilege. The role that
-- created the extension (a database owner, with a trusted install) may grant it on.
REVOKE ALL ON FUNCTION snowflake_observe(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_observe(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_observe(ulid) FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_observe(sno) FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_observe_trigger() FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_replica_guard() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_observe(bigint) TO @extowner@ WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION snowflake_observe(uuid) TO @extowner@ WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION snowflake_observe(ulid) TO @extowner@ WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION snowflake_observe(sno) TO @extowner@ WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION snowflake_observe_trigger() TO @extowner@ WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION snowflake_replica_guard() TO @extowner@ WITH GRANT OPTION;

-- masking: IDs shown outside the database without their time, shard or order, under the
-- keys of snowflake.mask_key_file. STABLE, not IMMUTABLE: a reload can change the active key.
-- PARALLEL RESTRICTED: they run in the leader, with its keys; a parallel worker would read the
-- file as it is on disk at that moment, perhaps edited and not yet reloaded.

CREATE FUNCTION snowflake_mask(id bigint, prefix text DEFAULT '') RETURNS text
	AS 'MODULE_PATHNAME', 'snowflake_mask' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

-- The token must carry exactly prefix: none without one.
CREATE FUNCTION snowflake_unmask(token text, prefix text DEFAULT '') RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_unmask' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

-- The same token for a sno, under a key of its own: a sno token never unmasks as a bigint.
CREATE FUNCTION sno_mask(id sno, prefix text DEFAULT '') RETURNS text
	AS 'MODULE_PATHNAME', 'sno_mask' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION sno_unmask(token text, prefix text DEFAULT '') RETURNS sno
	AS 'MODULE_PATHNAME', 'sno_unmask' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

-- Without a key id, the active key; NULL for a NULL ID.
CREATE FUNCTION uuidv7_mask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_mask' LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION uuidv7_unmask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_unmask' LANGUAGE C STABLE PARALLEL RESTRICTED;

-- uuidv47's façade, byte for byte: rand_a, snowflake_uuidv7()'s counter, shows through.
CREATE FUNCTION uuidv47_mask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv47_mask' LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION uuidv47_unmask(id uuid, key_id integer DEFAULT NULL) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv47_unmask' LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION ulid_mask(id ulid, key_id integer DEFAULT NULL) RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_mask' LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION ulid_unmask(id ulid, key_id integer DEFAULT NULL) RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_unmask' LANGUAGE C STABLE PARALLEL RESTRICTED;

-- observability

CREATE FUNCTION snowflake_status(
	OUT in_recovery boolean, OUT generation_refused text, OUT clock_gap_ms bigint,
	OUT clock_steps_back bigint, OUT clock_steps_forward bigint, OUT lead_waits bigint,
	OUT reserved_until timestamptz, OUT reservation_writes bigint,
	OUT reservation_waits bigint, OUT reservation_failures bigint, OUT reservation_error text,
	OUT reservation_replayed_until timestamptz, OUT writer_pid integer,
	OUT writer_busy_ms bigint, OUT observed_moves bigint, OUT observed_until timestamptz,
	OUT observe_skipped bigint, OUT shard_collisions bigint, OUT shard_id integer,
	OUT shard_count integer, OUT shard_id_source text, OUT shard_source text,
	OUT lease_state text, OUT lease_shard integer, OUT lease_shard_count integer,
	OUT lease_expires_ms bigint, OUT etcd_endpoint text, OUT etcd_error text,
	OUT etcd_requests bigint, OUT mask_key_id integer, OUT mask_keys integer,
	OUT mask_key_problem text, OUT mask_key_fingerprint text, OUT blocks bigint,
	OUT block_ids bigint, OUT unknown_settings text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'snowflake_status' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

CREATE FUNCTION snowflake_streams(
	OUT kind text, OUT shard integer, OUT last_ts timestamptz, OUT last_seq bigint,
	OUT lead_ms bigint, OUT blocks bigint, OUT block_ids bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'snowflake_streams' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- ID blocks: the next n IDs of this server's stream in one call, for a client to hand out

CREATE FUNCTION snowflake_block(n integer, wait boolean DEFAULT true,
	OUT first bigint, OUT last bigint, OUT count integer) RETURNS record
	AS 'MODULE_PATHNAME', 'snowflake_block' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_block_first(n integer) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_block_first' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_block_array(n integer, wait boolean DEFAULT true) RETURNS bigint[]
	AS 'MODULE_PATHNAME', 'snowflake_block_array' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_block_ids(first bigint, last bigint) RETURNS SETOF bigint
	AS 'MODULE_PATHNAME', 'snowflake_block_ids' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;

-- Every shard's activity is for monitoring roles, as pg_stat_statements' is.
REVOKE ALL ON FUNCTION snowflake_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_status() TO pg_monitor;
REVOKE ALL ON FUNCTION snowflake_streams() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_streams() TO pg_monitor;

-- the durable reservation: a cluster whose reservation file is missing refuses to generate
-- until it is restored or this accepts the clock; the install script calls it, so that a new
-- cluster needs no step

CREATE FUNCTION snowflake_reservation_create() RETURNS void
	AS 'MODULE_PATHNAME', 'snowflake_reservation_create' LANGUAGE C VOLATILE STRICT;

REVOKE ALL ON FUNCTION snowflake_reservation_create() FROM PUBLIC;
SELECT snowflake_reservation_create();

-- comments: what \df+, \dT+, \do+ and \dC+ show

COMMENT ON FUNCTION snowflake() IS 'a new 64-bit ID on shard snowflake.shard_id: 41 bits of milliseconds since snowflake.epoch, 13 of shard, 10 of sequence';
COMMENT ON FUNCTION snowflake(integer) IS 'a new 64-bit ID on the given shard (0 to 8191); EXECUTE is granted on purpose, not to PUBLIC';
COMMENT ON FUNCTION snowflake_decode(bigint) IS 'the time, shard and sequence of a snowflake ID';
COMMENT ON FUNCTION snowflake_timestamp(bigint) IS 'the millisecond of a snowflake ID';
COMMENT ON FUNCTION snowflake_shard(bigint) IS 'the shard of a snowflake ID';
COMMENT ON FUNCTION snowflake_seq(bigint) IS 'the sequence of a snowflake ID within its millisecond';
COMMENT ON FUNCTION snowflake_at(timestamptz) IS 'the smallest snowflake ID of the millisecond that holds the time: id >= snowflake_at(t) is a key range scan';
COMMENT ON FUNCTION snowflake_timestamp(bigint, timestamptz) IS 'the millisecond of a snowflake ID made with the given epoch (IMMUTABLE: for partition keys)';
COMMENT ON FUNCTION snowflake_at(timestamptz, timestamptz) IS 'the smallest snowflake ID of the millisecond that holds the time, with the given epoch (IMMUTABLE: for partition bounds and pruning)';
COMMENT ON FUNCTION snowflake_uuidv7() IS 'a new RFC 9562 version 7 UUID, strictly increasing across the server and durable across restarts';
COMMENT ON FUNCTION snowflake_uuidv7(interval) IS 'a version 7 UUID at the clock shifted by the interval, like core''s uuidv7(interval); outside the server-wide sequence';
COMMENT ON FUNCTION uuidv7_from_time(timestamptz) IS 'a version 7 UUID at the millisecond of the time, random otherwise (backfills)';
COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS 'the millisecond of a version 7 UUID; NULL for other versions';
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS 'the smallest version 7 UUID of the millisecond that holds the time, for key range scans';

COMMENT ON TYPE ulid IS 'a ULID: 16 bytes, 48 bits of Unix milliseconds and 80 random bits; 26 characters of Crockford base32 as text';
COMMENT ON TYPE ulid[] IS 'an array of ulid';
COMMENT ON FUNCTION ulid_in(cstring) IS 'ulid input: 26 characters of Crockford base32, or a UUID''s 36 (8-4-4-4-12 hexadecimal digits), either case; 22P02 otherwise';
COMMENT ON FUNCTION ulid_out(ulid) IS 'ulid output: 26 characters of Crockford base32, upper case';
COMMENT ON FUNCTION ulid_recv(internal) IS 'ulid binary input: 16 bytes';
COMMENT ON FUNCTION ulid_send(ulid) IS 'ulid binary output: 16 bytes';
COMMENT ON FUNCTION ulid() IS 'a new ULID, strictly increasing across the server (monotonic as the ULID specification defines it)';
COMMENT ON FUNCTION ulid_from_time(timestamptz) IS 'a random ULID at the millisecond of the time (backfills)';
COMMENT ON FUNCTION ulid_timestamp(ulid) IS 'the millisecond of a ULID';
COMMENT ON FUNCTION ulid_at(timestamptz) IS 'the smallest ULID of the millisecond that holds the time, for key range scans';
COMMENT ON FUNCTION ulid_to_bytea(ulid) IS 'the 16 bytes of a ULID';
COMMENT ON FUNCTION bytea_to_ulid(bytea) IS 'a ULID from 16 bytes';

COMMENT ON CAST (ulid AS uuid) IS 'the same 16 bytes, no conversion work';
COMMENT ON CAST (uuid AS ulid) IS 'the same 16 bytes, no conversion work';
COMMENT ON CAST (ulid AS text) IS 'Crockford base32, through the type''s output';
COMMENT ON CAST (text AS ulid) IS 'Crockford base32, through the type''s input';
COMMENT ON CAST (ulid AS bytea) IS 'the 16 bytes';
COMMENT ON CAST (bytea AS ulid) IS 'from exactly 16 bytes';
COMMENT ON CAST (ulid AS timestamptz) IS 'the millisecond of the ULID';
COMMENT ON CAST (timestamptz AS ulid) IS 'the smallest ULID of the millisecond';

COMMENT ON FUNCTION ulid_eq(ulid, ulid) IS 'implementation of = for ulid';
COMMENT ON FUNCTION ulid_ne(ulid, ulid) IS 'implementation of <> for ulid';
COMMENT ON FUNCTION ulid_lt(ulid, ulid) IS 'implementation of < for ulid';
COMMENT ON FUNCTION ulid_le(ulid, ulid) IS 'implementation of <= for ulid';
COMMENT ON FUNCTION ulid_gt(ulid, ulid) IS 'implementation of > for ulid';
COMMENT ON FUNCTION ulid_ge(ulid, ulid) IS 'implementation of >= for ulid';
COMMENT ON FUNCTION ulid_cmp(ulid, ulid) IS 'btree comparison of ulid: byte order, which is time order';
COMMENT ON FUNCTION ulid_sortsupport(internal) IS 'btree sort support for ulid';
COMMENT ON FUNCTION ulid_hash(ulid) IS 'hash of a ulid';
COMMENT ON FUNCTION ulid_hash_extended(ulid, bigint) IS 'seeded 64-bit hash of a ulid';
COMMENT ON OPERATOR = (ulid, ulid) IS 'equal';
COMMENT ON OPERATOR <> (ulid, ulid) IS 'not equal';
COMMENT ON OPERATOR < (ulid, ulid) IS 'less than: earlier';
COMMENT ON OPERATOR <= (ulid, ulid) IS 'less than or equal';
COMMENT ON OPERATOR > (ulid, ulid) IS 'greater than: later';
COMMENT ON OPERATOR >= (ulid, ulid) IS 'greater than or equal';

COMMENT ON FUNCTION ulid_smaller(ulid, ulid) IS 'the smaller of two ULIDs (min)';
COMMENT ON FUNCTION ulid_larger(ulid, ulid) IS 'the larger of two ULIDs (max)';
COMMENT ON AGGREGATE min(ulid) IS 'the smallest (earliest) ULID';
COMMENT ON AGGREGATE max(ulid) IS 'the largest (latest) ULID';

COMMENT ON FUNCTION ulid_eq(ulid, uuid) IS 'implementation of = for a ulid and a uuid: the same 16 bytes';
COMMENT ON FUNCTION ulid_ne(ulid, uuid) IS 'implementation of <> for a ulid and a uuid';
COMMENT ON FUNCTION ulid_lt(ulid, uuid) IS 'implementation of < for a ulid and a uuid: byte order';
COMMENT ON FUNCTION ulid_le(ulid, uuid) IS 'implementation of <= for a ulid and a uuid: byte order';
COMMENT ON FUNCTION ulid_gt(ulid, uuid) IS 'implementation of > for a ulid and a uuid: byte order';
COMMENT ON FUNCTION ulid_ge(ulid, uuid) IS 'implementation of >= for a ulid and a uuid: byte order';
COMMENT ON FUNCTION ulid_cmp(ulid, uuid) IS 'btree comparison of a ulid with a uuid: byte order (-1, 0 or 1 in sign)';
COMMENT ON FUNCTION ulid_eq(uuid, ulid) IS 'implementation of = for a uuid and a ulid: the same 16 bytes';
COMMENT ON FUNCTION ulid_ne(uuid, ulid) IS 'implementation of <> for a uuid and a ulid';
COMMENT ON FUNCTION ulid_lt(uuid, ulid) IS 'implementation of < for a uuid and a ulid: byte order';
COMMENT ON FUNCTION ulid_le(uuid, ulid) IS 'implementation of <= for a uuid and a ulid: byte order';
COMMENT ON FUNCTION ulid_gt(uuid, ulid) IS 'implementation of > for a uuid and a ulid: byte order';
COMMENT ON FUNCTION ulid_ge(uuid, ulid) IS 'implementation of >= for a uuid and a ulid: byte order';
COMMENT ON FUNCTION ulid_cmp(uuid, ulid) IS 'btree comparison of a uuid with a ulid: byte order (-1, 0 or 1 in sign)';
COMMENT ON OPERATOR = (ulid, uuid) IS 'equal: the same 16 bytes (a driver''s uuid parameter against a ulid column, through its index)';
COMMENT ON OPERATOR <> (ulid, uuid) IS 'not equal';
COMMENT ON OPERATOR < (ulid, uuid) IS 'less than, in byte order';
COMMENT ON OPERATOR <= (ulid, uuid) IS 'less than or equal, in byte order';
COMMENT ON OPERATOR > (ulid, uuid) IS 'greater than, in byte order';
COMMENT ON OPERATOR >= (ulid, uuid) IS 'greater than or equal, in byte order';
COMMENT ON OPERATOR = (uuid, ulid) IS 'equal: the same 16 bytes';
COMMENT ON OPERATOR <> (uuid, ulid) IS 'not equal';
COMMENT ON OPERATOR < (uuid, ulid) IS 'less than, in byte order';
COMMENT ON OPERATOR <= (uuid, ulid) IS 'less than or equal, in byte order';
COMMENT ON OPERATOR > (uuid, ulid) IS 'greater than, in byte order';
COMMENT ON OPERATOR >= (uuid, ulid) IS 'greater than or equal, in byte order';
COMMENT ON OPERATOR CLASS ulid_ops USING btree IS 'default btree operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_ops USING btree IS 'btree operators of ulid, and of ulid with uuid in either order';
COMMENT ON OPERATOR CLASS ulid_hash_ops USING hash IS 'default hash operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_hash_ops USING hash IS 'hash operators of ulid, and of ulid with uuid in either order';
COMMENT ON OPERATOR CLASS ulid_minmax_ops USING brin IS 'default BRIN minmax operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_minmax_ops USING brin IS 'BRIN minmax operators of ulid';

COMMENT ON TYPE sno IS 'a sno (github.com/muyo/sno): 10 bytes, 39 bits of 4 ms units since 2010-01-01 UTC, a tick-tock bit, a metabyte, a 16-bit partition and a 16-bit sequence; 16 characters of [2-9a-x] as text, in byte order';
COMMENT ON TYPE sno[] IS 'an array of sno';
COMMENT ON FUNCTION sno_in(cstring) IS 'sno input: 16 characters of 2-9 and a-x, or bytea''s hex text of the 10 bytes (\x and 20 hexadecimal digits)';
COMMENT ON FUNCTION sno_out(sno) IS 'sno output: 16 characters of 2-9 and a-x';
COMMENT ON FUNCTION sno_recv(internal) IS 'sno binary input: 10 bytes';
COMMENT ON FUNCTION sno_send(sno) IS 'sno binary output: 10 bytes';
COMMENT ON FUNCTION sno(integer) IS 'a new sno with the given metabyte (0 to 255) on the partition of the server''s shard, strictly increasing across the server and durable across restarts';
COMMENT ON FUNCTION sno_decode(sno) IS 'the time (4 ms units), metabyte, partition, sequence and tick-tock bit of a sno';
COMMENT ON FUNCTION sno_timestamp(sno) IS 'the time of a sno, in 4 ms units';
COMMENT ON FUNCTION sno_at(timestamptz) IS 'the smallest sno of the 4 ms unit that holds the time, for key range scans and partition bounds';
COMMENT ON FUNCTION sno_to_bytea(sno) IS 'the 10 bytes of a sno';
COMMENT ON FUNCTION bytea_to_sno(bytea) IS 'a sno from 10 bytes';
COMMENT ON CAST (sno AS bytea) IS 'the 10 bytes';
COMMENT ON CAST (bytea AS sno) IS 'from exactly 10 bytes; in assignments too (INSERT, UPDATE)';
COMMENT ON FUNCTION sno_eq(sno, sno) IS 'implementation of = for sno';
COMMENT ON FUNCTION sno_ne(sno, sno) IS 'implementation of <> for sno';
COMMENT ON FUNCTION sno_lt(sno, sno) IS 'implementation of < for sno';
COMMENT ON FUNCTION sno_le(sno, sno) IS 'implementation of <= for sno';
COMMENT ON FUNCTION sno_gt(sno, sno) IS 'implementation of > for sno';
COMMENT ON FUNCTION sno_smaller(sno, sno) IS 'the smaller of two snos (min)';
COMMENT ON FUNCTION sno_larger(sno, sno) IS 'the larger of two snos (max)';
COMMENT ON AGGREGATE min(sno) IS 'the smallest (earliest) sno';
COMMENT ON AGGREGATE max(sno) IS 'the largest (latest) sno';
COMMENT ON FUNCTION sno_ge(sno, sno) IS 'implementation of >= for sno';
COMMENT ON FUNCTION sno_cmp(sno, sno) IS 'btree comparison of sno: byte order, which is time order and the text''s order under a byte-wise collation (C)';
COMMENT ON FUNCTION sno_sortsupport(internal) IS 'btree sort support for sno';
COMMENT ON FUNCTION sno_hash(sno) IS 'hash of a sno';
COMMENT ON FUNCTION sno_hash_extended(sno, bigint) IS 'seeded 64-bit hash of a sno';
COMMENT ON OPERATOR = (sno, sno) IS 'equal';
COMMENT ON OPERATOR <> (sno, sno) IS 'not equal';
COMMENT ON OPERATOR < (sno, sno) IS 'less than: earlier';
COMMENT ON OPERATOR <= (sno, sno) IS 'less than or equal';
COMMENT ON OPERATOR > (sno, sno) IS 'greater than: later';
COMMENT ON OPERATOR >= (sno, sno) IS 'greater than or equal';
COMMENT ON OPERATOR CLASS sno_ops USING btree IS 'default btree operator class for sno';
COMMENT ON OPERATOR FAMILY sno_ops USING btree IS 'btree operators of sno';
COMMENT ON OPERATOR CLASS sno_hash_ops USING hash IS 'default hash operator class for sno';
COMMENT ON OPERATOR FAMILY sno_hash_ops USING hash IS 'hash operators of sno';
COMMENT ON OPERATOR CLASS sno_minmax_ops USING brin IS 'default BRIN minmax operator class for sno';
COMMENT ON OPERATOR FAMILY sno_minmax_ops USING brin IS 'BRIN minmax operators of sno';
COMMENT ON TYPE rsxid IS 'an xid (github.com/rs/xid): 12 bytes, 4 of Unix seconds, a 3-byte machine id, a 2-byte process id and a 3-byte counter; 20 characters of lower-case base32hex as text, in byte order';
COMMENT ON FUNCTION rsxid_in(cstring) IS 'rsxid input: 20 characters of 0-9 and a-v (lower case), the last 0 or g';
COMMENT ON FUNCTION rsxid_out(rsxid) IS 'rsxid output: 20 characters of 0-9 and a-v';
COMMENT ON FUNCTION rsxid_decode(rsxid) IS 'the second, the 3-byte machine id, the process id and the counter of an rsxid';
COMMENT ON FUNCTION rsxid_decode(text) IS 'the second, the 3-byte machine id, the process id and the counter of an xid (github.com/rs/xid) kept as text: 20 lower-case base32hex characters, read as the rsxid type reads them';
COMMENT ON FUNCTION rsxid_decode(bytea) IS 'the second, the 3-byte machine id, the process id and the counter of an xid (github.com/rs/xid) kept as 12 bytes';
COMMENT ON FUNCTION rsxid_timestamp(rsxid) IS 'the second of an rsxid';
COMMENT ON FUNCTION rsxid_timestamp(text) IS 'the second of an xid (github.com/rs/xid) kept as text, read as the rsxid type reads it';
COMMENT ON FUNCTION rsxid_at(timestamptz) IS 'the smallest rsxid of the second that holds the time (1970 to 2106-02-07 06:28:15 UTC), for key range scans and partition bounds';
COMMENT ON TYPE rsxid[] IS 'an array of rsxid';
COMMENT ON FUNCTION rsxid_recv(internal) IS 'rsxid binary input: 12 bytes';
COMMENT ON FUNCTION rsxid_send(rsxid) IS 'rsxid binary output: 12 bytes';
COMMENT ON FUNCTION rsxid_to_bytea(rsxid) IS 'the 12 bytes of an rsxid';
COMMENT ON FUNCTION bytea_to_rsxid(bytea) IS 'an rsxid from 12 bytes';
COMMENT ON CAST (rsxid AS bytea) IS 'the 12 bytes';
COMMENT ON CAST (bytea AS rsxid) IS 'from exactly 12 bytes; in assignments too (INSERT, UPDATE)';
COMMENT ON CAST (rsxid AS text) IS 'lower-case base32hex, through the type''s output';
COMMENT ON CAST (text AS rsxid) IS 'lower-case base32hex, through the type''s input';
COMMENT ON FUNCTION rsxid_eq(rsxid, rsxid) IS 'implementation of = for rsxid';
COMMENT ON FUNCTION rsxid_ne(rsxid, rsxid) IS 'implementation of <> for rsxid';
COMMENT ON FUNCTION rsxid_lt(rsxid, rsxid) IS 'implementation of < for rsxid';
COMMENT ON FUNCTION rsxid_le(rsxid, rsxid) IS 'implementation of <= for rsxid';
COMMENT ON FUNCTION rsxid_gt(rsxid, rsxid) IS 'implementation of > for rsxid';
COMMENT ON FUNCTION rsxid_ge(rsxid, rsxid) IS 'implementation of >= for rsxid';
COMMENT ON FUNCTION rsxid_cmp(rsxid, rsxid) IS 'btree comparison of rsxid: byte order, which is time order and the text''s order under a byte-wise collation (C)';
COMMENT ON FUNCTION rsxid_sortsupport(internal) IS 'btree sort support for rsxid';
COMMENT ON FUNCTION rsxid_hash(rsxid) IS 'hash of an rsxid';
COMMENT ON FUNCTION rsxid_hash_extended(rsxid, bigint) IS 'seeded 64-bit hash of an rsxid';
COMMENT ON OPERATOR = (rsxid, rsxid) IS 'equal';
COMMENT ON OPERATOR <> (rsxid, rsxid) IS 'not equal';
COMMENT ON OPERATOR < (rsxid, rsxid) IS 'less than: earlier';
COMMENT ON OPERATOR <= (rsxid, rsxid) IS 'less than or equal';
COMMENT ON OPERATOR > (rsxid, rsxid) IS 'greater than: later';
COMMENT ON OPERATOR >= (rsxid, rsxid) IS 'greater than or equal';
COMMENT ON OPERATOR CLASS rsxid_ops USING btree IS 'default btree operator class for rsxid';
COMMENT ON OPERATOR FAMILY rsxid_ops USING btree IS 'btree operators of rsxid';
COMMENT ON OPERATOR CLASS rsxid_hash_ops USING hash IS 'default hash operator class for rsxid';
COMMENT ON OPERATOR FAMILY rsxid_hash_ops USING hash IS 'hash operators of rsxid';
COMMENT ON OPERATOR CLASS rsxid_minmax_ops USING brin IS 'default BRIN minmax operator class for rsxid';
COMMENT ON OPERATOR FAMILY rsxid_minmax_ops USING brin IS 'BRIN minmax operators of rsxid';
COMMENT ON FUNCTION rsxid_smaller(rsxid, rsxid) IS 'the smaller of two rsxids (min)';
COMMENT ON FUNCTION rsxid_larger(rsxid, rsxid) IS 'the larger of two rsxids (max)';
COMMENT ON AGGREGATE min(rsxid) IS 'the smallest (earliest) rsxid';
COMMENT ON AGGREGATE max(rsxid) IS 'the largest (latest) rsxid';

COMMENT ON TYPE ksuid IS 'a KSUID (github.com/segmentio/ksuid): 20 bytes, 4 of seconds since 2014-05-13 16:53:20 UTC and a 16-byte random payload; 27 characters of base62 as text, in byte order';
COMMENT ON FUNCTION ksuid_in(cstring) IS 'ksuid input: 27 characters of 0-9, A-Z and a-z, at most aWgEPTl1tmebfsQzFP4bxwgy80V (2^160 - 1)';
COMMENT ON FUNCTION ksuid_out(ksuid) IS 'ksuid output: 27 characters of 0-9, A-Z and a-z, zero padded';
COMMENT ON FUNCTION ksuid_decode(ksuid) IS 'the second and the 16-byte payload of a KSUID';
COMMENT ON FUNCTION ksuid_decode(text) IS 'the second and the 16-byte payload of a KSUID kept as text (27 base62 characters), read as the ksuid type reads it';
COMMENT ON FUNCTION ksuid_timestamp(ksuid) IS 'the second of a KSUID';
COMMENT ON FUNCTION ksuid_timestamp(text) IS 'the second of a KSUID kept as text (27 base62 characters), read as the ksuid type reads it';
COMMENT ON FUNCTION ksuid_at(timestamptz) IS 'the smallest KSUID of the second that holds the time (2014-05-13 16:53:20 to 2150-06-19 23:21:35 UTC), for key range scans and partition bounds';
COMMENT ON TYPE ksuid[] IS 'an array of ksuid';
COMMENT ON FUNCTION ksuid_recv(internal) IS 'ksuid binary input: 20 bytes';
COMMENT ON FUNCTION ksuid_send(ksuid) IS 'ksuid binary output: 20 bytes';
COMMENT ON FUNCTION ksuid_to_bytea(ksuid) IS 'the 20 bytes of a KSUID';
COMMENT ON FUNCTION bytea_to_ksuid(bytea) IS 'a KSUID from 20 bytes';
COMMENT ON CAST (ksuid AS bytea) IS 'the 20 bytes';
COMMENT ON CAST (bytea AS ksuid) IS 'from exactly 20 bytes; in assignments too (INSERT, UPDATE)';
COMMENT ON CAST (ksuid AS text) IS 'base62, through the type''s output';
COMMENT ON CAST (text AS ksuid) IS 'base62, through the type''s input';
COMMENT ON FUNCTION ksuid_eq(ksuid, ksuid) IS 'implementation of = for ksuid';
COMMENT ON FUNCTION ksuid_ne(ksuid, ksuid) IS 'implementation of <> for ksuid';
COMMENT ON FUNCTION ksuid_lt(ksuid, ksuid) IS 'implementation of < for ksuid';
COMMENT ON FUNCTION ksuid_le(ksuid, ksuid) IS 'implementation of <= for ksuid';
COMMENT ON FUNCTION ksuid_gt(ksuid, ksuid) IS 'implementation of > for ksuid';
COMMENT ON FUNCTION ksuid_ge(ksuid, ksuid) IS 'implementation of >= for ksuid';
COMMENT ON FUNCTION ksuid_cmp(ksuid, ksuid) IS 'btree comparison of ksuid: byte order, which is time order and the text''s order under a byte-wise collation (C)';
COMMENT ON FUNCTION ksuid_sortsupport(internal) IS 'btree sort support for ksuid';
COMMENT ON FUNCTION ksuid_hash(ksuid) IS 'hash of a KSUID';
COMMENT ON FUNCTION ksuid_hash_extended(ksuid, bigint) IS 'seeded 64-bit hash of a KSUID';
COMMENT ON OPERATOR = (ksuid, ksuid) IS 'equal';
COMMENT ON OPERATOR <> (ksuid, ksuid) IS 'not equal';
COMMENT ON OPERATOR < (ksuid, ksuid) IS 'less than: earlier';
COMMENT ON OPERATOR <= (ksuid, ksuid) IS 'less than or equal';
COMMENT ON OPERATOR > (ksuid, ksuid) IS 'greater than: later';
COMMENT ON OPERATOR >= (ksuid, ksuid) IS 'greater than or equal';
COMMENT ON OPERATOR CLASS ksuid_ops USING btree IS 'default btree operator class for ksuid';
COMMENT ON OPERATOR FAMILY ksuid_ops USING btree IS 'btree operators of ksuid';
COMMENT ON OPERATOR CLASS ksuid_hash_ops USING hash IS 'default hash operator class for ksuid';
COMMENT ON OPERATOR FAMILY ksuid_hash_ops USING hash IS 'hash operators of ksuid';
COMMENT ON OPERATOR CLASS ksuid_minmax_ops USING brin IS 'default BRIN minmax operator class for ksuid';
COMMENT ON OPERATOR FAMILY ksuid_minmax_ops USING brin IS 'BRIN minmax operators of ksuid';
COMMENT ON FUNCTION ksuid_smaller(ksuid, ksuid) IS 'the smaller of two KSUIDs (min)';
COMMENT ON FUNCTION ksuid_larger(ksuid, ksuid) IS 'the larger of two KSUIDs (max)';
COMMENT ON AGGREGATE min(ksuid) IS 'the smallest (earliest) ksuid';
COMMENT ON AGGREGATE max(ksuid) IS 'the largest (latest) ksuid';
COMMENT ON FUNCTION rsxid() IS 'a new rsxid: the second, the server''s shard as machine id, the postmaster''s process id and a counter, strictly increasing across the server and durable across restarts';
COMMENT ON FUNCTION ksuid() IS 'a new KSUID: the second, then a payload of the server''s shard, a counter and 11 random bytes, strictly increasing across the server and durable across restarts';

COMMENT ON FUNCTION snowflake_status() IS 'one row: whether the server generates (and why not), the IDs'' clock over the system clock and its steps, waits at snowflake.max_lead, the durable reservation with its writer, writes, waits, failures and replay, observed IDs, where the shards come from with the etcd lease''s state, the blocks taken with the IDs they held, and snowflake.* names in the configuration files that are no setting (misspellings, each with its file, line and nearest setting); for pg_monitor';
COMMENT ON FUNCTION snowflake_streams() IS 'a row per ID stream that issued a value since start: its last value, its lead over the system clock, and its blocks taken with the IDs they held; for pg_monitor';
COMMENT ON FUNCTION snowflake_block(integer, boolean) IS 'reserves the next n (1 to 1048576, within snowflake.block_max_lead) IDs of this server''s stream in one step, durable like every ID: every ID of the block''s shard from first to last, consecutive integers up to 1024; with wait false, what the stream holds now (count 0 to n), never waiting';
COMMENT ON FUNCTION snowflake_block_first(integer) IS 'reserves a block of n (1 to 1024) consecutive IDs, durable like every ID, and returns its first: the block is first to first + n - 1';
COMMENT ON FUNCTION snowflake_block_array(integer, boolean) IS 'the IDs of snowflake_block(n, wait) as an array, in order';
COMMENT ON FUNCTION snowflake_block_ids(bigint, bigint) IS 'every ID of a block from first to last, in order: within a millisecond the next sequence, then sequence 0 of the next millisecond';
COMMENT ON FUNCTION snowflake_observe_trigger() IS 'row trigger for replication''s apply: observes the named ID columns (default: the primary key) of each row, and counts in snowflake_status() what it may not observe instead of raising';
COMMENT ON FUNCTION snowflake_replica_guard() IS 'row trigger for tables that replication writes into: observes the named ID columns (default: the primary key) as snowflake_observe_trigger() does, and reports a replicated snowflake ID of this server''s own shards, or a sno of the partition it issues snos on, as a shard collision (snowflake.on_shard_collision)';
COMMENT ON FUNCTION snowflake_reservation_create() IS 'a server whose reservation file is missing may generate again, from the clock: only once the clock is past every ID already issued';
COMMENT ON FUNCTION snowflake_decode(bigint, text) IS 'time, node and sequence of another system''s 64-bit ID: layout twitter, discord (shard: the 10 bits of datacenter and worker, or worker and process), sonyflake (shard: machine), pgedge, pgedge_1_1 (shard: node; seq: count) or instagram';
COMMENT ON FUNCTION snowflake_at(timestamptz, text) IS 'the smallest ID of a layout (twitter, discord, sonyflake, pgedge, pgedge_1_1, instagram) at the time: for key range scans of such IDs';
COMMENT ON FUNCTION objectid_timestamp(text) IS 'the second in a MongoDB ObjectId of 24 hex digits';
COMMENT ON FUNCTION objectid_timestamp(bytea) IS 'the second in a MongoDB ObjectId of 12 bytes';
COMMENT ON FUNCTION twitter_decode(bigint) IS 'the time, datacenter, worker and sequence of a Twitter (X) snowflake ID';
COMMENT ON FUNCTION discord_decode(bigint) IS 'the time, internal worker, internal process and increment of a Discord snowflake';
COMMENT ON FUNCTION sonyflake_decode(bigint) IS 'the time (10 ms units), machine and sequence of a Sonyflake ID';
COMMENT ON FUNCTION pgedge_decode(bigint, text) IS 'the time, node and count of a pgEdge snowflake ID: layout pgedge (made by pgEdge snowflake 1.2 and later, the default) or pgedge_1_1 (1.0 and 1.1, whose count is above the node)';
COMMENT ON FUNCTION objectid_decode(text) IS 'the second, the 5 random bytes and the counter of a MongoDB ObjectId of 24 hex digits';
COMMENT ON FUNCTION objectid_decode(bytea) IS 'the second, the 5 random bytes and the counter of a MongoDB ObjectId of 12 bytes';
COMMENT ON FUNCTION typeid(text, uuid) IS 'the TypeID of a uuid with a type prefix (at most 63 of a-z and _, neither first nor last; empty: the suffix alone): prefix_ and 26 characters of lower-case Crockford base32';
COMMENT ON FUNCTION typeid_uuid(text) IS 'the uuid of a TypeID, checked whole against the TypeID specification';
COMMENT ON FUNCTION typeid_prefix(text) IS 'the type prefix of a TypeID (empty when it has none), checked whole against the TypeID specification';
COMMENT ON FUNCTION snowflake_observe(bigint) IS 'every snowflake ID issued here from now on is above this one, from another server (bounded by snowflake.max_clock_offset)';
COMMENT ON FUNCTION snowflake_observe(uuid) IS 'every ID issued here from now on is in a later millisecond than this version 7 UUID (bounded by snowflake.max_clock_offset)';
COMMENT ON FUNCTION snowflake_observe(ulid) IS 'every ID issued here from now on is in a later millisecond than this ULID (bounded by snowflake.max_clock_offset)';
COMMENT ON FUNCTION snowflake_observe(sno) IS 'every ID issued here from now on is in a later millisecond than this sno''s 4 ms unit, every sno in a later unit (bounded by snowflake.max_clock_offset)';

COMMENT ON FUNCTION snowflake_mask(bigint, text) IS 'a 26-character token for an ID (with prefix_ before it if given) under the active key of snowflake.mask_key_file: no time, shard or order can be read from it';
COMMENT ON FUNCTION snowflake_unmask(text, text) IS 'the ID of a token made by snowflake_mask() with any key of snowflake.mask_key_file, which must carry exactly prefix (none when not given); a changed or forged token is an ERROR';
COMMENT ON FUNCTION sno_mask(sno, text) IS 'a 26-character token for a sno (with prefix_ before it if given) under the active key of snowflake.mask_key_file: no time, metabyte, partition or order can be read from it';
COMMENT ON FUNCTION sno_unmask(text, text) IS 'the sno of a token made by sno_mask() with any key of snowflake.mask_key_file, which must carry exactly prefix (none when not given); a changed or forged token, or a snowflake_mask() token, is an ERROR';
COMMENT ON FUNCTION uuidv7_mask(uuid, integer) IS 'a version-4-looking UUID for a UUIDv7, its time and rand_a (the per-millisecond counter) hidden, under the active mask key or the key of key_id';
COMMENT ON FUNCTION uuidv7_unmask(uuid, integer) IS 'the UUIDv7 behind a uuidv7_mask() UUID, with the active mask key or the key of key_id';
COMMENT ON FUNCTION uuidv47_mask(uuid, integer) IS 'uuidv47''s version-4-looking façade of a UUIDv7, byte for byte: its time hidden, rand_a (snowflake_uuidv7()''s counter) shown; under the active mask key or the key of key_id';
COMMENT ON FUNCTION uuidv47_unmask(uuid, integer) IS 'the UUIDv7 behind a uuidv47_mask() UUID, with the active mask key or the key of key_id';
COMMENT ON FUNCTION ulid_mask(ulid, integer) IS 'a ULID with nothing to read in it (AES-256 of the ULID), under the active mask key or the key of key_id';
COMMENT ON FUNCTION ulid_unmask(ulid, integer) IS 'the ULID behind a ulid_mask() ULID, with the active mask key or the key of key_id';

-- migration helper

-- Moves an existing key column over to the extension's generator for its type: bigint to
-- snowflake(), uuid to snowflake_uuidv7(), ulid to ulid(). A dry run by default: the rows are
-- the statements, each run in this order with dry_run => false, in the caller's transaction
-- (an error undoes them all); rows that start with "--" say what a statement costs or
-- leaves and are not run. The extension is relocatable, so its schema is looked up when the
-- function runs, never written into the script; search_path is fixed for a trusted
-- extension's sake.
CREATE FUNCTION snowflake_adopt(tbl regclass, col name, dry_run boolean DEFAULT true,
	drop_sequence boolean DEFAULT false, widen boolean DEFAULT false,
	keep_unordered boolean DEFAULT false) RETURNS SETOF text
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
	SET search_path = pg_catalog, pg_temp
	AS $adopt$
DECLARE
	ext_oid oid;
	ext_schema name;
	rel record;
	att record;
	qtbl text;
	qcol text;
	base_type oid;
	gen name;
	widen_type boolean := false;
	cur_default text;
	adopted boolean := false;
	seq record;
	used_seq record;
	refs text[];
	ref_tables text[];
	ref_cols text[];
	wait_mode text;
	lock_stmt text;
	bound bigint;
	top numeric;
	indexed boolean;
	top_id text;
	top_ts timestamptz;
	unordered boolean := false;
	stmts text[];
	locked boolean := false;
	s text;
	r record;
BEGIN
	IF tbl IS NULL OR col IS NULL OR dry_run IS NULL OR drop_sequence IS NULL OR widen IS NULL
	   OR keep_unordered IS NULL THEN
		RAISE EXCEPTION 'snowflake_adopt: no argument may be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT e.oid, n.nspname INTO ext_oid, ext_schema
	  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	 WHERE e.extname = 'snowflake';

	-- Inspected twice on a real run: once to find what to lock, then again under the lock,
	-- so that what runs is what the catalogs say while nothing else can change them.
	LOOP
		SELECT c.relkind, c.relispartition, c.relowner, n.nspname, c.relname INTO rel
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE c.oid = tbl;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid
				USING ERRCODE = 'undefined_table';
		END IF;
		qtbl := format('%I.%I', rel.nspname, rel.relname);
		IF rel.relkind NOT IN ('r', 'p') THEN
			RAISE EXCEPTION '% is not a table', qtbl
				USING ERRCODE = 'wrong_object_type',
				      DETAIL = format('It is %s; snowflake_adopt() changes the column default of a table or a partitioned table.',
				                      CASE rel.relkind WHEN 'v' THEN 'a view' WHEN 'm' THEN 'a materialized view'
				                        WHEN 'f' THEN 'a foreign table' WHEN 'S' THEN 'a sequence'
				                        WHEN 'i' THEN 'an index' WHEN 'I' THEN 'a partitioned index'
				                        WHEN 'c' THEN 'a composite type' ELSE 'a relation of kind ' || rel.relkind::text END);
		END IF;
		IF rel.relispartition THEN
			RAISE EXCEPTION '% is a partition', qtbl
				USING ERRCODE = 'wrong_object_type',
				      HINT = format('Adopt the column of the partitioned table, %s: its new default reaches every partition.',
				                    (SELECT format('%I.%I', pn.nspname, p.relname)
				                       FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
				                       JOIN pg_namespace pn ON pn.oid = p.relnamespace
				                      WHERE i.inhrelid = tbl));
		END IF;
		IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
			RAISE EXCEPTION 'must be owner of table % to adopt a column of it', qtbl
				USING ERRCODE = 'insufficient_privilege';
		END IF;

		SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated INTO att
		  FROM pg_attribute a
		 WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, qtbl
				USING ERRCODE = 'undefined_column';
		END IF;
		qcol := quote_ident(col);
		IF att.attgenerated <> '' THEN
			RAISE EXCEPTION 'column % of % is a generated column', qcol, qtbl
				USING ERRCODE = 'invalid_table_definition';
		END IF;

		-- the generator of the column's type, through domains
		base_type := att.atttypid;
		WHILE (SELECT t.typtype = 'd' FROM pg_type t WHERE t.oid = base_type) LOOP
			SELECT t.typbasetype INTO base_type FROM pg_type t WHERE t.oid = base_type;
		END LOOP;
		gen := CASE
			WHEN base_type = 'int8'::regtype THEN 'snowflake'
			WHEN base_type = 'uuid'::regtype THEN 'snowflake_uuidv7'
			WHEN EXISTS (SELECT FROM pg_depend d JOIN pg_type t ON t.oid = d.objid
			              WHERE d.classid = 'pg_type'::regclass AND d.refclassid = 'pg_extension'::regclass
			                AND d.refobjid = ext_oid AND d.deptype = 'e'
			                AND t.oid = base_type AND t.typname = 'ulid') THEN 'ulid'
			END;

		-- every foreign key column that points at this one (partitions' copies of a key
		-- follow their parent's)
		SELECT array_agg(format('%I.%I', cn.nspname, cc.relname) ORDER BY cn.nspname, cc.relname, ca.attname),
		       array_agg(quote_ident(ca.attname) ORDER BY cn.nspname, cc.relname, ca.attname),
		       array_agg(format('%I.%I(%I) %s', cn.nspname, cc.relname, ca.attname, format_type(ca.atttypid, ca.atttypmod))
		                 ORDER BY cn.nspname, cc.relname, ca.attname)
		  INTO ref_tables, ref_cols, refs
		  FROM pg_constraint k
		  CROSS JOIN LATERAL unnest(k.conkey, k.confkey) AS u(fromcol, tocol)
		  JOIN pg_class cc ON cc.oid = k.conrelid
		  JOIN pg_namespace cn ON cn.oid = cc.relnamespace
		  JOIN pg_attribute ca ON ca.attrelid = k.conrelid AND ca.attnum = u.fromcol
		 WHERE k.contype = 'f' AND k.confrelid = tbl AND k.conparentid = 0 AND u.tocol = att.attnum
		   AND ca.atttypid IN ('int2'::regtype, 'int4'::regtype);

		IF att.atttypid IN ('int2'::regtype, 'int4'::regtype) THEN
			IF NOT widen THEN
				RAISE EXCEPTION 'column % of % is %: a snowflake ID needs bigint', qcol, qtbl, format_type(att.atttypid, NULL)
					USING ERRCODE = 'datatype_mismatch',
					      DETAIL = CASE WHEN refs IS NULL THEN 'No foreign key column of type smallint or integer references it.'
					                    ELSE 'Foreign key columns that reference it: ' || array_to_string(refs, ', ') || '.' END,
					      HINT = 'The column must become bigint, and so must every foreign key column that references it. '
					             'snowflake_adopt(..., widen => true) lists those ALTER TABLE ... TYPE bigint statements '
					             '(and runs them with dry_run => false); each rewrites its table and its indexes under an ACCESS EXCLUSIVE lock.';
			END IF;
			widen_type := true;
			gen := 'snowflake';
		ELSIF gen IS NULL THEN
			RAISE EXCEPTION 'column % of % is %: no generator of this extension makes that type', qcol, qtbl, format_type(att.atttypid, NULL)
				USING ERRCODE = 'datatype_mismatch',
				      HINT = 'snowflake_adopt() moves a bigint column to snowflake(), a uuid column to snowflake_uuidv7() and a ulid column to ulid().';
		END IF;

		SELECT pg_get_expr(d.adbin, d.adrelid),
		       EXISTS (SELECT FROM pg_depend dd JOIN pg_proc p ON p.oid = dd.refobjid
		                 JOIN pg_depend de ON de.classid = 'pg_proc'::regclass AND de.objid = p.oid
		                  AND de.refclassid = 'pg_extension'::regclass AND de.refobjid = ext_oid AND de.deptype = 'e'
		                WHERE dd.classid = 'pg_attrdef'::regclass AND dd.objid = d.oid
		                  AND dd.refclassid = 'pg_proc'::regclass AND p.proname = gen)
		  INTO cur_default, adopted
		  FROM pg_attrdef d WHERE d.adrelid = tbl AND d.adnum = att.attnum;
		adopted := coalesce(adopted, false);

		-- the sequence the column owns: serial's, or an identity's
		SELECT format('%I.%I', sn.nspname, s.relname) AS name, s.oid INTO seq
		  FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
		  JOIN pg_namespace sn ON sn.oid = s.relnamespace
		 WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
		   AND d.refobjid = tbl AND d.refobjsubid = att.attnum AND d.deptype IN ('a', 'i')
		   AND s.relkind = 'S';
		-- a sequence the default calls that the column does not own (CREATE SEQUENCE, then
		-- DEFAULT nextval(...)): never dropped here, and said so
		SELECT format('%I.%I', sn.nspname, s.relname) AS name, s.oid INTO used_seq
		  FROM pg_attrdef ad
		  JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
		                  AND d.refclassid = 'pg_class'::regclass
		  JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
		  JOIN pg_namespace sn ON sn.oid = s.relnamespace
		 WHERE ad.adrelid = tbl AND ad.adnum = att.attnum AND s.oid IS DISTINCT FROM seq.oid
		 ORDER BY s.oid LIMIT 1;

		IF adopted AND NOT (drop_sequence AND seq.oid IS NOT NULL) THEN
			RAISE NOTICE 'column % of % already takes its default from %.%(): nothing to do', qcol, qtbl, ext_schema, gen;
			RETURN;
		END IF;

		-- Existing values stay, and new ones must sort above them. Checked through the
		-- sequence, and through a btree index that leads with the column (never a scan of the
		-- table): a column with no such index is not checked, and the dry run says so.
		indexed := EXISTS (SELECT FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
		                    JOIN pg_am am ON am.oid = ic.relam
		                    WHERE i.indrelid = tbl AND i.indkey[0] = att.attnum AND am.amname = 'btree'
		                      AND i.indisvalid AND i.indpred IS NULL);
		-- A sequence's values are far below the snowflake IDs of now, but values put in by
		-- hand may not be: any at or above the first ID of this millisecond could meet a new one.
		IF gen = 'snowflake' AND NOT adopted AND NOT widen_type THEN
			EXECUTE format('SELECT %I.snowflake_at(pg_catalog.now())', ext_schema) INTO bound;
			IF seq.oid IS NOT NULL THEN
				top := pg_sequence_last_value(seq.oid);
			END IF;
			IF indexed THEN
				EXECUTE format('SELECT greatest($1, max(%I)) FROM %s', col, qtbl) INTO top USING top;
			END IF;
			IF top >= bound THEN
				RAISE EXCEPTION 'column % of % holds values at or above the snowflake IDs of now', qcol, qtbl
					USING ERRCODE = 'object_not_in_prerequisite_state',
					      DETAIL = format('Its largest value is %s; the IDs issued from now on start at %s, so a new ID could equal an old one.', top, bound);
			END IF;
		END IF;
		-- A ULID, or a version 7 UUID, whose time is after now would sort above every key
		-- issued until then: a ulid column filled from gen_random_uuid() (random values, whose
		-- first 48 bits read as years up to 10889), or rows backfilled with a future time.
		-- A uuid column's version 4 values hold no time and stay where they sort.
		IF gen IN ('snowflake_uuidv7', 'ulid') AND NOT adopted AND indexed THEN
			-- (qualified: a bare name in ORDER BY would be the text output column, a sort of the table)
			EXECUTE format('SELECT %1$s.%2$I::text FROM %1$s WHERE %1$s.%2$I IS NOT NULL ORDER BY %1$s.%2$I DESC LIMIT 1',
			               qtbl, col) INTO top_id;
			IF top_id IS NOT NULL THEN
				EXECUTE format('SELECT %I.%I($1::%s)', ext_schema,
				               CASE gen WHEN 'ulid' THEN 'ulid_timestamp' ELSE 'uuidv7_timestamp' END,
				               CASE gen WHEN 'ulid' THEN format('%I.ulid', ext_schema) ELSE 'uuid' END)
				  INTO top_ts USING top_id;
			END IF;
			IF top_ts > clock_timestamp() THEN
				RAISE EXCEPTION 'column % of % holds keys whose time is after now', qcol, qtbl
					USING ERRCODE = 'object_not_in_prerequisite_state',
					      DETAIL = format('Its largest value, %s, holds the time %s: every key %s() issues before then would sort below it.',
					                      top_id, top_ts, gen),
					      HINT = CASE gen WHEN 'ulid' THEN
					                 'A ulid column filled from gen_random_uuid() holds random values, not times: keep such keys in a uuid column, '
					                 'where snowflake_uuidv7() keeps version 7 keys apart from the old version 4 ones. Keys written ahead of time '
					                 'must be corrected (or the time reached) before adopting.'
					             ELSE 'Keys written ahead of time (uuidv7_from_time() of a future time, or a client whose clock is ahead) '
					                  'must be corrected (or the time reached) before adopting.' END;
			END IF;
		END IF;
		-- A uuid column of random keys (version 4, from gen_random_uuid()): they hold no time,
		-- and almost all of them sort above every UUIDv7 of this century, so after adopting,
		-- ORDER BY the key and a time range of keys mix old rows with new ones. Refused unless
		-- the caller says so (keep_unordered); a dry run says it.
		IF gen = 'snowflake_uuidv7' AND NOT adopted AND top_id IS NOT NULL AND top_ts IS NULL THEN
			EXECUTE format('SELECT $1::uuid >= %I.uuidv7_at(pg_catalog.clock_timestamp())', ext_schema)
			  INTO unordered USING top_id;
			IF unordered AND NOT keep_unordered AND NOT dry_run THEN
				RAISE EXCEPTION 'column % of % holds random UUIDs that sort above the keys snowflake_uuidv7() issues', qcol, qtbl
					USING ERRCODE = 'object_not_in_prerequisite_state',
					      DETAIL = format('Its largest value, %s, is a version %s UUID, which holds no time. After adopting, '
					                      'old rows would sort above and among new ones: ORDER BY %s would not be time order, '
					                      'and %s >= uuidv7_at(ts) would return old rows as new.',
					                      top_id, substr(top_id, 15, 1), qcol, qcol),
					      HINT = 'To keep the old keys, with only new keys in time order, call snowflake_adopt(..., keep_unordered => true) '
					             'and order or select old rows by a time column of their own. For keys in time order throughout, '
					             'copy the rows into a new table keyed by snowflake_uuidv7() instead.';
			END IF;
		END IF;

		-- NOWAIT unless the caller set lock_timeout: never queue for the lock with no limit,
		-- since a waiting ACCESS EXCLUSIVE request blocks every query on the table behind it.
		wait_mode := CASE WHEN current_setting('lock_timeout') = '0' THEN ' NOWAIT' ELSE '' END;
		lock_stmt := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE%s', qtbl, wait_mode);
		IF NOT dry_run AND NOT locked THEN
			EXECUTE lock_stmt;
			locked := true;
			CONTINUE;
		END IF;
		EXIT;
	END LOOP;

	stmts := ARRAY[format('-- ACCESS EXCLUSIVE on %s%s until the transaction ends: %s',
	                      qtbl, CASE WHEN rel.relkind = 'p' THEN ' and its partitions' ELSE '' END,
	                      CASE WHEN widen_type THEN 'ALTER ... TYPE bigint rewrites it and its indexes under the lock'
	                           ELSE 'catalog changes only, no rewrite, no scan' END)
	               || CASE WHEN wait_mode <> '' THEN '; NOWAIT: an error (55P03) at once if another transaction holds a lock on it'
	                       ELSE format('; waits at most lock_timeout (%s)', current_setting('lock_timeout')) END,
	               lock_stmt];
	IF widen_type THEN
		FOR r IN SELECT DISTINCT t FROM unnest(ref_tables) AS t WHERE t <> qtbl ORDER BY t LOOP
			stmts := stmts || format('-- ACCESS EXCLUSIVE on %s: its foreign key column becomes bigint, a rewrite', r.t)
			               || format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE%s', r.t, wait_mode);
		END LOOP;
	END IF;
	IF att.attidentity <> '' THEN
		stmts := stmts || format('-- GENERATED %s AS IDENTITY goes, and with it its sequence %s: an identity''s sequence cannot be kept',
		                         CASE att.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END, seq.name);
		IF att.attidentity = 'a' THEN
			stmts := stmts || '-- an INSERT may give the column a value of its own from now on, as with any DEFAULT'::text;
		END IF;
		stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %s DROP IDENTITY', qtbl, qcol);
	END IF;
	IF widen_type THEN
		stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %s TYPE bigint', qtbl, qcol);
		FOR i IN 1 .. coalesce(cardinality(ref_tables), 0) LOOP
			stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %s TYPE bigint', ref_tables[i], ref_cols[i]);
		END LOOP;
	END IF;
	IF NOT adopted THEN
		IF cur_default IS NOT NULL THEN
			stmts := stmts || format('-- replaces DEFAULT %s; existing values stay', cur_default);
		END IF;
		IF unordered THEN
			stmts := stmts || format('-- %s holds random (version 4) UUIDs above the keys snowflake_uuidv7() issues: '
			                         'old rows will sort above and among new ones, and %s >= uuidv7_at(ts) will return them%s',
			                         qcol, qcol,
			                         CASE WHEN keep_unordered THEN ' (keep_unordered => true)'
			                              ELSE '; dry_run => false refuses this unless keep_unordered => true' END);
		END IF;
		IF NOT indexed AND NOT widen_type THEN
			stmts := stmts || format('-- no valid btree index leads with %s: its values were not checked against the keys %s() issues from now',
			                         qcol, gen);
		END IF;
		IF rel.relkind = 'p' THEN
			stmts := stmts || '-- the new default reaches every partition, and partitions made later take it'::text;
		END IF;
		stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %s SET DEFAULT %I.%I()', qtbl, qcol, ext_schema, gen);
	END IF;
	IF seq.oid IS NOT NULL AND att.attidentity = '' THEN
		IF drop_sequence THEN
			stmts := stmts || format('DROP SEQUENCE %s', seq.name);
		ELSE
			stmts := stmts || format('-- sequence %s stays, owned by the column (drop_sequence => true drops it)', seq.name);
		END IF;
	END IF;
	IF used_seq.oid IS NOT NULL AND NOT adopted THEN
		stmts := stmts || format('-- sequence %s stays: the old default used it, but the column does not own it, so drop_sequence => true leaves it (DROP SEQUENCE %s once nothing uses it)', used_seq.name, used_seq.name);
	END IF;

	-- No row spans lines, so that a dry run pasted into psql runs only what it shows: a
	-- comment shows a line break as \n or \r; a statement holds identifiers but no literals,
	-- and names each quoted one in its U&"..." form, where a line break is \000A or \000D.
	FOREACH s IN ARRAY stmts LOOP
		IF left(s, 3) = '-- ' THEN
			s := replace(replace(s, E'\n', E'\\n'), E'\r', E'\\r');
		ELSIF s ~ E'[\n\r]' THEN
			s := replace(replace(replace(regexp_replace(s, '"(?:[^"]|"")*"', E'U&\\&', 'g'),
			                             E'\\', E'\\\\'), E'\n', E'\\000A'), E'\r', E'\\000D');
		END IF;
		IF NOT dry_run AND left(s, 3) <> '-- ' THEN
			EXECUTE s;
		END IF;
		RETURN NEXT s;
	END LOOP;
END
$adopt$;

COMMENT ON FUNCTION snowflake_adopt(regclass, name, boolean, boolean, boolean, boolean) IS 'moves a serial, identity, uuid or ulid key column to this extension''s generator; a dry run (the statements, one a row) unless dry_run => false; widen => true makes an integer key and its foreign keys bigint; keep_unordered => true accepts random uuid keys that sort above the new ones';
