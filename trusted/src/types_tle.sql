-- The types pg_tle alone can make (ulid, sno, rsxid, ksuid): the C extension's text forms in
-- and out, its byte order in = <> < <= > >=, its casts, and its <kind>_timestamp on the type.
-- pg_tle's API (its docs/09_datatypes.md, src/datatype.c): pgtle.create_shell_type, then I/O
-- functions in a trusted language (text -> bytea, bytea -> text, IMMUTABLE STRICT, in the
-- type's schema), then pgtle.create_base_type, which makes a fixed-length type of
-- internallength + 4 bytes (the value is a bytea, header included) and an explicit binary
-- cast to bytea. Those functions run only for a member of pgtle_admin: for anyone else
-- CREATE EXTENSION makes the rest of the edition and says, in a WARNING, that the types need
-- that role. PostgreSQL lets no one but a superuser create an operator class, so the types
-- have none: no PRIMARY KEY, ORDER BY, GROUP BY or DISTINCT on the type itself; a UNIQUE index
-- on (id::bytea) is the key, ORDER BY id::bytea the order (byte order, the C types' order),
-- and the operators are SQL functions the planner inlines into comparisons of id::bytea, so
-- that such an index serves = and ranges. Design: docs/managed.md.

DO $types$
DECLARE
	-- name, bytes, X_in's body (id text -> bytea), X_out's body (id bytea -> text), the spec.
	-- X_in and X_out are PL/pgSQL with qualified names: pg_tle calls them through a new
	-- FmgrInfo for every value, which makes a SQL function plan its body again each time
	-- (several times slower); a PL/pgSQL function keeps its plans across calls.
	kinds CONSTANT text[][] := ARRAY[
		['ulid', '16',
		 -- as the C type, a UUID's 36 characters too (drivers send a uuid parameter that way)
		 $$uuid_send(CASE WHEN id ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$' THEN id::uuid ELSE @extschema@.text_to_ulid(id) END)$$,
		 $$@extschema@.ulid_to_text(encode(id, 'hex')::uuid)$$,
		 '26 characters of Crockford base32 or a UUID''s 36 (github.com/ulid/spec)'],
		['sno', '10', '@extschema@.text_to_sno(id)', '@extschema@.sno_to_text(id)', '16 characters of base32 (github.com/muyo/sno)'],
		['rsxid', '12', '@extschema@.text_to_rsxid(id)', '@extschema@.rsxid_to_text(id)', '20 characters of base32hex (github.com/rs/xid)'],
		['ksuid', '20', '@extschema@.text_to_ksuid(id)', '@extschema@.ksuid_to_text(id)', '27 characters of base62 (github.com/segmentio/ksuid)']];
	k text[];
	op text[];
BEGIN
	IF NOT pg_catalog.pg_has_role(current_user, 'pgtle_admin', 'MEMBER') THEN
		-- a WARNING: pg_tle runs the script with client_min_messages at WARNING at least
		RAISE WARNING 'the types ulid, sno, rsxid and ksuid are not created: pg_tle makes a type only for a member of pgtle_admin'
			USING HINT = 'DROP EXTENSION snowflake_trusted and CREATE EXTENSION snowflake_trusted as a member of pgtle_admin to have them; the functions on uuid and bytea work without them.';
		RETURN;
	END IF;
	FOREACH k SLICE 1 IN ARRAY kinds LOOP
		EXECUTE pg_catalog.format($sql$
SELECT pgtle.create_shell_type('@extschema@', '%1$s');
CREATE FUNCTION %1$s_in(id text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$
BEGIN
	RETURN %3$s;
END
$f$;
COMMENT ON FUNCTION %1$s_in(text) IS 'the %1$s type''s input for pg_tle: its %2$s bytes from %5$s; 22P02 for text that is not one, as the C extension''s %1$s input';
CREATE FUNCTION %1$s_out(id bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$
BEGIN
	RETURN %4$s;
END
$f$;
COMMENT ON FUNCTION %1$s_out(bytea) IS 'the %1$s type''s output for pg_tle: the text of its %2$s bytes, as the C extension''s %1$s output';
SELECT pgtle.create_base_type('@extschema@', '%1$s', '%1$s_in(text)'::regprocedure, '%1$s_out(bytea)'::regprocedure, %2$s);
COMMENT ON FUNCTION %1$s_in(cstring) IS 'pg_tle''s input function of the %1$s type (its C, the one pg_tle installs), which calls %1$s_in(text)';
COMMENT ON FUNCTION %1$s_out(%1$s) IS 'pg_tle''s output function of the %1$s type (its C, the one pg_tle installs), which calls %1$s_out(bytea)';
COMMENT ON TYPE %1$s IS 'a %1$s made by pg_tle: %2$s bytes kept as a bytea of fixed length (%2$s + 4 bytes), text as the C extension''s type; ordered by its bytes. No operator class (a superuser''s): index (id::bytea), ORDER BY id::bytea';

CREATE FUNCTION %1$s_cmp(a %1$s, b %1$s) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN byteacmp(a::bytea, b::bytea);
COMMENT ON FUNCTION %1$s_cmp(%1$s, %1$s) IS 'below zero, zero or above zero as the first %1$s is below, equal to or above the second in the order of their bytes (byteacmp), as the C extension''s %1$s_cmp';
CREATE FUNCTION %1$s_to_bytea(id %1$s) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN id::bytea;
COMMENT ON FUNCTION %1$s_to_bytea(%1$s) IS 'the %2$s bytes of a %1$s (the same as id::bytea), as the C extension''s %1$s_to_bytea';
CREATE FUNCTION bytea_to_%1$s(id bytea) RETURNS %1$s
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, @extschema@, pg_temp AS $f$
BEGIN
	IF length(id) <> %2$s THEN
		RAISE EXCEPTION 'invalid length for a %1$s: %% bytes', length(id) USING ERRCODE = '22P03', DETAIL = 'A %1$s is %2$s bytes.';
	END IF;
	RETURN %1$s_in(%1$s_out(id)::cstring);
END
$f$;
COMMENT ON FUNCTION bytea_to_%1$s(bytea) IS 'the %1$s of %2$s bytes; 22P03 for another length, as the C extension''s bytea_to_%1$s';
CREATE CAST (bytea AS %1$s) WITH FUNCTION bytea_to_%1$s(bytea) %6$s;
$sql$, k[1], k[2], k[3], k[4], replace(k[5], '''', ''''''), CASE WHEN k[1] = 'ulid' THEN '' ELSE 'AS ASSIGNMENT' END);

		FOREACH op SLICE 1 IN ARRAY ARRAY[
			['eq', '=', '=', '<>', 'eqsel', 'eqjoinsel'], ['ne', '<>', '<>', '=', 'neqsel', 'neqjoinsel'],
			['lt', '<', '>', '>=', 'scalarltsel', 'scalarltjoinsel'], ['le', '<=', '>=', '>', 'scalarlesel', 'scalarlejoinsel'],
			['gt', '>', '<', '<=', 'scalargtsel', 'scalargtjoinsel'], ['ge', '>=', '<=', '<', 'scalargesel', 'scalargejoinsel']] LOOP
			EXECUTE pg_catalog.format($sql$
CREATE FUNCTION %1$s_%2$s(a %1$s, b %1$s) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN a::bytea %3$s b::bytea;
COMMENT ON FUNCTION %1$s_%2$s(%1$s, %1$s) IS 'a %3$s b in the order of their bytes, as the C extension''s %1$s_%2$s; inlined into a::bytea %3$s b::bytea, which an index on (id::bytea) serves';
CREATE OPERATOR %3$s (LEFTARG = %1$s, RIGHTARG = %1$s, PROCEDURE = %1$s_%2$s,
	COMMUTATOR = %4$s, NEGATOR = %5$s, RESTRICT = %6$s, JOIN = %7$s);
$sql$, k[1], op[1], op[2], op[3], op[4], op[5], op[6]);
		END LOOP;
	END LOOP;

	-- a ulid is a uuid's 16 bytes: assignment casts both ways, as the C extension's, so that
	-- "id ulid DEFAULT ulid()" stores what ulid() returns
	CREATE FUNCTION ulid_to_uuid(id ulid) RETURNS uuid
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN encode(id::bytea, 'hex')::uuid;
	COMMENT ON FUNCTION ulid_to_uuid(ulid) IS 'the uuid of the same 16 bytes as a ulid (the C extension casts without a function)';
	CREATE FUNCTION uuid_to_ulid(id uuid) RETURNS ulid
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ulid_in(id::text::cstring);
	COMMENT ON FUNCTION uuid_to_ulid(uuid) IS 'the ulid of the same 16 bytes as a uuid (the C extension casts without a function)';
	CREATE CAST (ulid AS uuid) WITH FUNCTION ulid_to_uuid(ulid) AS ASSIGNMENT;
	CREATE CAST (uuid AS ulid) WITH FUNCTION uuid_to_ulid(uuid) AS ASSIGNMENT;
	-- text both ways where the C extension has these casts (sno has none)
	CREATE CAST (ulid AS text) WITH INOUT AS ASSIGNMENT;
	CREATE CAST (text AS ulid) WITH INOUT AS ASSIGNMENT;
	CREATE CAST (rsxid AS text) WITH INOUT AS ASSIGNMENT;
	CREATE CAST (text AS rsxid) WITH INOUT AS ASSIGNMENT;
	CREATE CAST (ksuid AS text) WITH INOUT AS ASSIGNMENT;
	CREATE CAST (text AS ksuid) WITH INOUT AS ASSIGNMENT;

	-- the decoders of the functions on uuid and bytea, on the types, with the C extension's names
	CREATE FUNCTION ulid_timestamp(id ulid) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ulid_timestamp(ulid_to_uuid(id));
	COMMENT ON FUNCTION ulid_timestamp(ulid) IS 'the millisecond of a ulid (its first 48 bits), as the C extension''s ulid_timestamp';
	-- a literal, as the C extension's ulid_timestamp('01ARZ...') reads it: of uuid, ulid and text,
	-- an untyped literal takes text (without it, uuid and ulid tie: 42725)
	CREATE FUNCTION ulid_timestamp(id text) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ulid_timestamp(id::ulid);
	COMMENT ON FUNCTION ulid_timestamp(text) IS 'the millisecond of a ULID given as text (26 characters of Crockford base32, or a UUID''s 36), as the C extension''s ulid_timestamp reads a literal; 22P02 for bad text';
	CREATE FUNCTION sno_timestamp(id sno) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN sno_timestamp(id::bytea);
	COMMENT ON FUNCTION sno_timestamp(sno) IS 'the time of a sno, in 4 ms units (github.com/muyo/sno), as the C extension''s sno_timestamp';
	CREATE FUNCTION rsxid_timestamp(id rsxid) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN rsxid_timestamp(id::bytea);
	COMMENT ON FUNCTION rsxid_timestamp(rsxid) IS 'the second of an rs/xid (its first 4 bytes, Unix seconds), as the C extension''s rsxid_timestamp';
	CREATE FUNCTION ksuid_timestamp(id ksuid) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ksuid_timestamp(id::bytea);
	COMMENT ON FUNCTION ksuid_timestamp(ksuid) IS 'the second of a KSUID (its first 4 bytes, seconds since 2014-05-13 16:53:20 UTC), as the C extension''s ksuid_timestamp';
END
$types$;
