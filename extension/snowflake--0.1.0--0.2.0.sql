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

-- Issuing on a shard other than snowflake.shard_id needs a grant given on purpose.
REVOKE ALL ON FUNCTION snowflake(integer) FROM PUBLIC;

-- snowflake_status() counts the waits for the reservation and its failed writes, and is for
-- monitoring roles.
DROP FUNCTION snowflake_status();
CREATE FUNCTION snowflake_status(
	OUT kind text, OUT shard integer, OUT last_ts timestamptz, OUT last_seq bigint,
	OUT lead_ms bigint, OUT clock_steps_back bigint, OUT clock_steps_forward bigint,
	OUT lead_waits bigint, OUT reserved_until timestamptz, OUT reservation_writes bigint,
	OUT reservation_waits bigint, OUT reservation_failures bigint,
	OUT reservation_replayed_until timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'snowflake_status' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Every shard's activity is for monitoring roles, as pg_stat_statements' is.
REVOKE ALL ON FUNCTION snowflake_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_status() TO pg_monitor;

-- snowflake time with the epoch as an argument: no setting is read, so these are IMMUTABLE,
-- as partition keys, plan-time partition pruning and expression indexes need

CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'snowflake_timestamp_epoch' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_at(ts timestamptz, epoch timestamptz) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_at_epoch' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

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
COMMENT ON FUNCTION uuid_version(uuid) IS 'the version field of an RFC 9562 UUID; NULL when the variant is not RFC 9562''s';
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS 'the smallest version 7 UUID of the millisecond that holds the time, for key range scans';

COMMENT ON TYPE ulid IS 'a ULID: 16 bytes, 48 bits of Unix milliseconds and 80 random bits; 26 characters of Crockford base32 as text';
COMMENT ON TYPE ulid[] IS 'an array of ulid';
COMMENT ON FUNCTION ulid_in(cstring) IS 'ulid input: 26 characters of Crockford base32, either case';
COMMENT ON FUNCTION ulid_out(ulid) IS 'ulid output: 26 characters of Crockford base32, upper case';
COMMENT ON FUNCTION ulid_recv(internal) IS 'ulid binary input: 16 bytes';
COMMENT ON FUNCTION ulid_send(ulid) IS 'ulid binary output: 16 bytes';
COMMENT ON FUNCTION ulid() IS 'a new ULID, strictly increasing across the server (monotonic as the ULID specification defines it)';
COMMENT ON FUNCTION ulid(timestamptz) IS 'a random ULID at the millisecond of the time (backfills)';
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

COMMENT ON OPERATOR CLASS ulid_ops USING btree IS 'default btree operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_ops USING btree IS 'btree operators of ulid';
COMMENT ON OPERATOR CLASS ulid_hash_ops USING hash IS 'default hash operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_hash_ops USING hash IS 'hash operators of ulid';
COMMENT ON OPERATOR CLASS ulid_minmax_ops USING brin IS 'default BRIN minmax operator class for ulid';
COMMENT ON OPERATOR FAMILY ulid_minmax_ops USING brin IS 'BRIN minmax operators of ulid';

COMMENT ON FUNCTION snowflake_status() IS 'a row per active ID stream: its last value, its lead over the clock, clock steps, waits at snowflake.max_lead, and the durable reservation with its writes, waits and failures; for pg_monitor';
