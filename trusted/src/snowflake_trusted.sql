-- The trusted edition of snowflake: SQL and PL/pgSQL only, for servers that will not load the
-- C library (managed PostgreSQL). The one source of trusted/snowflake_trusted.sql (psql -f)
-- and trusted/snowflake_trusted_tle.sql (pg_tle): trusted/build.sh wraps it, and it must stay
-- a valid extension script (no BEGIN, COMMIT or psql meta-commands). Design: docs/managed.md.
--
-- Objects go into the current schema (the first of search_path that exists), as psql -f users
-- expect and as CREATE EXTENSION ... SCHEMA does. Functions that touch the owner's table or
-- counters are SECURITY DEFINER with search_path pinned to pg_catalog, this schema, pg_temp
-- (the DO block at the end pins it: the schema is known only at install time).

-- Refused where another role may create objects in this schema: the SECURITY DEFINER functions
-- below resolve operators and functions through it, so such a role could put its own there
-- and run code as the owner (read the mask keys, move a counter back). Who may create: the
-- schema's owner and each role granted CREATE on it (PUBLIC: every role), and every role that
-- is a member of one of them (SET ROLE reaches it, INHERIT or not), read from the schema's ACL.
-- PostgreSQL 15 and later give CREATE on public to the database's owner alone; on 14, or in a
-- schema granted more widely, revoke it first. Checked again by snowflake_configure() and
-- snowflake_mask_key_add(), for a grant made after the install. The checks' own calls and
-- comparisons are schema-qualified or of exact types (oid = oid), which pg_catalog's win: an
-- operator put in the schema cannot take their place before they find it.
CREATE FUNCTION snowflake_others_who_create(schema regnamespace) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	WITH creators AS (
		SELECT n.nspowner AS r FROM pg_catalog.pg_namespace n WHERE n.oid = schema::oid
		UNION
		SELECT a.grantee FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
		 WHERE n.oid = schema::oid AND a.privilege_type = 'CREATE')
	SELECT CASE WHEN EXISTS (SELECT FROM creators WHERE r = 0::oid) THEN 'PUBLIC (every role)' ELSE
		(SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_ident(x.rolname), ', '
				ORDER BY pg_catalog.quote_ident(x.rolname))
		   FROM pg_catalog.pg_roles x, creators c
		  WHERE x.rolcanlogin AND NOT x.rolsuper AND x.rolname <> CURRENT_USER
		    AND pg_catalog.pg_has_role(x.oid, c.r, 'MEMBER')) END;
END;
COMMENT ON FUNCTION snowflake_others_who_create(regnamespace) IS 'the login roles other than the current user and superusers that may create objects in the schema (as its owner, a grantee of CREATE or a member of one), comma-separated, ''PUBLIC (every role)'' when CREATE is granted to PUBLIC, NULL when none may; the install, snowflake_configure() and snowflake_mask_key_add() refuse (42501) unless NULL';

-- Functions and operators that other roles already own in the schema are refused too: a call
-- in the edition's bodies that needs an implicit cast to reach pg_catalog's (bigint & integer,
-- say) would bind to one of theirs of the exact types, and run it as the owner. Superusers'
-- (the objects of trusted extensions such as pgcrypto) are not.
CREATE FUNCTION snowflake_others_objects(schema regnamespace) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT pg_catalog.string_agg(o.what, ', ' ORDER BY o.what)
	  FROM (SELECT pg_catalog.format('function %s (owner %I)', p.oid::pg_catalog.regprocedure, r.rolname) AS what
	          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles r ON r.oid = p.proowner
	         WHERE p.pronamespace = schema::oid AND r.rolname <> CURRENT_USER AND NOT r.rolsuper
	        UNION ALL
	        SELECT pg_catalog.format('operator %s (owner %I)', o.oid::pg_catalog.regoperator, r.rolname)
	          FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_roles r ON r.oid = o.oprowner
	         WHERE o.oprnamespace = schema::oid AND r.rolname <> CURRENT_USER AND NOT r.rolsuper) o;
END;
COMMENT ON FUNCTION snowflake_others_objects(regnamespace) IS 'the functions and operators in the schema owned by roles other than the current user and superusers, comma-separated with their owners, NULL when none; the install, snowflake_configure() and snowflake_mask_key_add() refuse (42501) unless NULL';

CREATE FUNCTION snowflake_refuse_open_schema() RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
	schema regnamespace := (SELECT c.relnamespace::regnamespace FROM pg_catalog.pg_class c
		WHERE c.oid = pg_catalog.to_regclass('snowflake_config')::oid);
	who text;
BEGIN
	IF schema IS NULL THEN  -- at the install, before the configuration's table
		-- by its OID: the name's text read as regnamespace would be an identifier ("Ids" as ids)
		schema := (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = pg_catalog.current_schema())::regnamespace;
	END IF;
	who := snowflake_others_who_create(schema);
	IF who IS NOT NULL THEN
		RAISE EXCEPTION 'other roles may create objects in schema %', schema
			USING ERRCODE = '42501',
			DETAIL = pg_catalog.format('Roles that may: %s. The edition''s SECURITY DEFINER functions would run what they put there, as the owner.', who),
			HINT = pg_catalog.format('REVOKE CREATE ON SCHEMA %s FROM PUBLIC (and from those roles and the roles they are members of), or install into a schema only the owner creates in.', schema);
	END IF;
	who := snowflake_others_objects(schema);
	IF who IS NOT NULL THEN
		RAISE EXCEPTION 'schema % holds functions or operators of other roles', schema
			USING ERRCODE = '42501',
			DETAIL = pg_catalog.format('%s. The edition''s functions could bind to them and run them as the owner.', who),
			HINT = 'Install into a schema of its own (CREATE SCHEMA ids; SET search_path = ids), or drop those objects or give them to the owner.';
	END IF;
END
$$;
COMMENT ON FUNCTION snowflake_refuse_open_schema() IS 'raises 42501, naming them, when roles other than the owner may create objects in the edition''s schema (snowflake_others_who_create) or own functions or operators there (snowflake_others_objects); called by the install, snowflake_configure() and snowflake_mask_key_add()';
DO $guard$ BEGIN PERFORM snowflake_refuse_open_schema(); END $guard$;

-- configuration: one row, the owner's to change

CREATE TABLE snowflake_config (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	shard_id integer CHECK (shard_id BETWEEN 0 AND 8191),
	epoch_ms bigint NOT NULL DEFAULT 1577836800000
		CHECK (epoch_ms BETWEEN 0 AND 4102444800000),
	max_lag_ms integer NOT NULL DEFAULT 100 CHECK (max_lag_ms BETWEEN 1 AND 1000)
);
INSERT INTO snowflake_config DEFAULT VALUES;
REVOKE ALL ON TABLE snowflake_config FROM PUBLIC;
GRANT SELECT ON TABLE snowflake_config TO PUBLIC;
COMMENT ON TABLE snowflake_config IS 'the trusted edition''s configuration, one row: shard_id (0 to 8191, NULL until snowflake_configure sets it), epoch_ms (Unix milliseconds, default 1577836800000 = 2020-01-01 00:00 UTC, as the C extension''s snowflake.epoch), max_lag_ms (how far an ID''s time may trail the clock before a catch-up, 1 to 1000). Readable by all, changed only by snowflake_configure()';

-- The generators hold the configuration as constants, written by snowflake_configure(): a change
-- made to the table alone would not reach them (and a new epoch would make issued IDs read
-- wrong). Refused, against mistakes: the owner may still disable the trigger.
CREATE FUNCTION snowflake_config_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $$
BEGIN
	IF pg_catalog.current_setting('snowflake_trusted.configuring', true) IS DISTINCT FROM 'on' THEN
		RAISE EXCEPTION '% on snowflake_config is refused: snowflake_configure() changes it', TG_OP
			USING ERRCODE = '55000',
			DETAIL = 'The generators hold the configuration as constants that snowflake_configure() writes; a change made to the table alone would not reach them.',
			HINT = 'SELECT * FROM snowflake_configure(shard_id => ..., max_lag_ms => ...).';
	END IF;
	RETURN CASE WHEN TG_OP = 'UPDATE' THEN NEW END;
END
$$;
REVOKE ALL ON FUNCTION snowflake_config_guard() FROM PUBLIC;
COMMENT ON FUNCTION snowflake_config_guard() IS 'the trigger on snowflake_config, not for calling: UPDATE, DELETE and TRUNCATE other than snowflake_configure()''s are refused with 55000 (the generators would not see them)';
CREATE TRIGGER snowflake_config_guard BEFORE UPDATE OR DELETE ON snowflake_config
	FOR EACH ROW EXECUTE FUNCTION snowflake_config_guard();
CREATE TRIGGER snowflake_config_guard_truncate BEFORE TRUNCATE ON snowflake_config
	FOR EACH STATEMENT EXECUTE FUNCTION snowflake_config_guard();

-- counters: sequences, the one counter SQL has that is shared by every session, never rolled
-- back and WAL-logged ahead of the values it hands out (CACHE 1: one order for all sessions)

-- snowflake(): tick = milliseconds since the epoch * 1024 + sequence; 50 bits, as the ID's
-- sign bit stays 0 (the last millisecond is 2^40 - 1 after the epoch, as the C extension's)
CREATE SEQUENCE snowflake_counter AS bigint MINVALUE 0 START 0 MAXVALUE 1125899906842623 CACHE 1 NO CYCLE;
-- snowflake_uuidv7() and ulid(): tick = Unix milliseconds * 4096 + counter (60 bits)
CREATE SEQUENCE snowflake_counter128 AS bigint MINVALUE 0 START 0 MAXVALUE 1152921504606846975 CACHE 1 NO CYCLE;
-- nextval and currval for all (the generators run as their caller); setval for none but the
-- owner: it can move a counter back
REVOKE ALL ON SEQUENCE snowflake_counter, snowflake_counter128 FROM PUBLIC;
GRANT USAGE ON SEQUENCE snowflake_counter, snowflake_counter128 TO PUBLIC;
COMMENT ON SEQUENCE snowflake_counter IS 'snowflake()''s counter: milliseconds since the epoch * 1024 + sequence; only the owner may setval it';
COMMENT ON SEQUENCE snowflake_counter128 IS 'snowflake_uuidv7()''s and ulid()''s counter: Unix milliseconds * 4096 + 12-bit counter; only the owner may setval it';

-- the slow path: a counter that trails the clock by more than max_lag_ms moves up to the clock

CREATE FUNCTION snowflake_catch_up(kind "char") RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER PARALLEL UNSAFE AS $$
DECLARE
	counter regclass;
	units bigint;
	origin bigint;
	lag bigint;
	now_ms bigint;
	last_ms bigint;  -- the layout's last millisecond: the counter's MAXVALUE / units
	name text;
BEGIN
	SELECT c.epoch_ms, c.max_lag_ms INTO origin, lag FROM snowflake_config c;
	IF kind = 's' THEN
		counter := 'snowflake_counter';
		units := 1024;
		last_ms := 1099511627775;  -- 2^40 - 1 after the epoch
		name := 'snowflake';
	ELSIF kind = 'u' THEN
		counter := 'snowflake_counter128';
		units := 4096;
		origin := 0;
		last_ms := 281474976710655;  -- 2^48 - 1 after 1970
		name := 'uuidv7 and ulid';
	ELSE
		RAISE EXCEPTION 'kind % is not a counter of the trusted edition', kind
			USING ERRCODE = '22023', DETAIL = 'The kinds are ''s'' (snowflake) and ''u'' (UUIDv7, ULID).';
	END IF;
	-- One catch-up at a time. The lock is taken in a subtransaction that is rolled back on the
	-- way out, so it is released here, not at the caller's commit, and an error or a cancel
	-- releases it too. Only the owner may lock the table: no other role can hold it.
	BEGIN
		LOCK TABLE snowflake_config IN EXCLUSIVE MODE;
		-- the clock is read after the lock: the catch-up before this one may have moved the counter
		-- (pg_catalog's functions by name, and operands of the operators' exact types: this runs
		-- as the owner, called by any role, and resolves names when it runs)
		now_ms := (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000000::double precision)::bigint / 1000 - origin;
		IF now_ms < 0 THEN
			RAISE EXCEPTION 'system clock is before snowflake.epoch'
				USING ERRCODE = '22008',
				DETAIL = pg_catalog.format('The clock reads %s ms since 1970, the epoch is %s ms.', now_ms + origin, origin);
		END IF;
		-- past the layout's last millisecond: the C extension's error, not setval's
		IF now_ms > last_ms THEN
			RAISE EXCEPTION '% values are exhausted: the clock is past the range of the layout', name
				USING ERRCODE = '22008';
		END IF;
		-- One expression, so that the counter is read and set as close together as SQL allows:
		-- take the next value; if it still trails the clock by more than max_lag_ms, set the
		-- counter to the clock (setval with is_called: currval() is the clock's tick, the next
		-- nextval() is above it). Either way currval() is the tick the caller composes.
		PERFORM CASE WHEN nextval(counter) < (now_ms - lag) * units THEN setval(counter, now_ms * units) END;
		RAISE SQLSTATE 'SFCUP';
	EXCEPTION WHEN SQLSTATE 'SFCUP' THEN
		NULL;  -- the rollback released the lock; the counter (not transactional) keeps its move
	END;
	RETURN true;
END
$$;
COMMENT ON FUNCTION snowflake_catch_up("char") IS 'the generators'' slow path, not for calling: moves counter ''s'' (snowflake) or ''u'' (UUIDv7, ULID) up to the clock when it trails it by more than max_lag_ms, one caller at a time, and leaves the tick to use in currval(); always true. 22008 when the clock is before the epoch or past the layout''s range (2^40 ms after the epoch for snowflake)';

-- the generators' bodies depend on the configuration: snowflake_configure() writes them again

CREATE FUNCTION snowflake_trusted_write_generators() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE AS $$
DECLARE
	cfg snowflake_config;
	schema text;
	-- Unix milliseconds of the clock, exact for any time this century (date_part's double
	-- holds the microseconds exactly; the division floors)
	clock_ms constant text := '((pg_catalog.date_part(''epoch'', pg_catalog.clock_timestamp()) * 1000000)::bigint / 1000)';
BEGIN
	SELECT * INTO cfg FROM snowflake_config;
	SELECT quote_ident(n.nspname) INTO schema
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = 'snowflake_config'::regclass;
	IF cfg.shard_id IS NULL THEN
		EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$s.snowflake() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $b$
BEGIN
	RAISE EXCEPTION 'snowflake() refuses: no shard is configured in this database'
		USING ERRCODE = '55000',
		DETAIL = 'The trusted edition issues IDs only on a shard given to this database on purpose.',
		HINT = 'As the database owner: SELECT snowflake_configure(shard_id => N), N from 0 to 8191, unique to this database among all that write the same tables.';
END
$b$
$f$, schema);
	ELSE
		-- A body of one expression, inlined into the caller's query (no SECURITY DEFINER, no
		-- SET): the clock is read, then nextval(); a value within max_lag_ms of the clock is
		-- the tick, else the catch-up sets it; currval() gives it back without a second
		-- nextval. BEGIN ATOMIC binds the counters' OIDs now, not at each call.
		EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$s.snowflake() RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
	SELECT CASE WHEN (%2$s - %3$s) * 1024 <= pg_catalog.nextval('%1$s.snowflake_counter'::regclass)
			OR %1$s.snowflake_catch_up('s')
		THEN ((pg_catalog.currval('%1$s.snowflake_counter'::regclass) >> 10) << 23)
			| (%4$s::bigint << 10) | (pg_catalog.currval('%1$s.snowflake_counter'::regclass) & 1023) END;
END
$f$, schema, clock_ms, cfg.epoch_ms + cfg.max_lag_ms, cfg.shard_id);
	END IF;
	-- snowflake(shard): the same counter (a tick is unique across shards too), any shard;
	-- not STRICT, so that it is inlined (a NULL shard gives NULL all the same). The range
	-- check calls PL/pgSQL only to raise.
	EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$s.snowflake(shard integer) RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
	SELECT CASE WHEN (%2$s - %3$s) * 1024 <= pg_catalog.nextval('%1$s.snowflake_counter'::regclass)
			OR %1$s.snowflake_catch_up('s')
		THEN ((pg_catalog.currval('%1$s.snowflake_counter'::regclass) >> 10) << 23)
			| (CASE WHEN shard BETWEEN 0 AND 8191 THEN shard ELSE %1$s.snowflake_bad_shard(shard) END::bigint << 10)
			| (pg_catalog.currval('%1$s.snowflake_counter'::regclass) & 1023) END;
END
$f$, schema, clock_ms, cfg.epoch_ms + cfg.max_lag_ms);
	-- RFC 9562 UUIDv7, method 1: 48 bits of Unix ms, version 7, rand_a a 12-bit counter (the
	-- tick's low 12 bits, as the C extension's), variant 10 and 62 random bits (the last 62
	-- of a gen_random_uuid(), whose variant is 10 too)
	EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$s.snowflake_uuidv7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
	SELECT CASE WHEN (%2$s - %3$s) * 4096 <= pg_catalog.nextval('%1$s.snowflake_counter128'::regclass)
			OR %1$s.snowflake_catch_up('u')
		THEN (pg_catalog.lpad(pg_catalog.to_hex(pg_catalog.currval('%1$s.snowflake_counter128'::regclass) >> 12), 12, '0')
			|| '7' || pg_catalog.lpad(pg_catalog.to_hex(pg_catalog.currval('%1$s.snowflake_counter128'::regclass) & 4095), 3, '0')
			|| pg_catalog.right(pg_catalog.gen_random_uuid()::text, 17))::uuid END;
END
$f$, schema, clock_ms, cfg.max_lag_ms);
	-- ULID: 48 bits of Unix ms, then 80 bits: the same 12-bit counter, 4 zero bits and the
	-- last 64 bits of a gen_random_uuid() (62 random: one strong random draw per ID, the
	-- costly part)
	EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$s.ulid() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
	SELECT CASE WHEN (%2$s - %3$s) * 4096 <= pg_catalog.nextval('%1$s.snowflake_counter128'::regclass)
			OR %1$s.snowflake_catch_up('u')
		THEN (pg_catalog.lpad(pg_catalog.to_hex(pg_catalog.currval('%1$s.snowflake_counter128'::regclass)), 15, '0')
			|| '0' || pg_catalog.right(pg_catalog.gen_random_uuid()::text, 17))::uuid END;
END
$f$, schema, clock_ms, cfg.max_lag_ms);
END
$$;
REVOKE ALL ON FUNCTION snowflake_trusted_write_generators() FROM PUBLIC;
COMMENT ON FUNCTION snowflake_trusted_write_generators() IS 'writes snowflake(), snowflake(integer), snowflake_uuidv7() and ulid() for the configuration in snowflake_config (shard, epoch and max_lag_ms are constants in their bodies); called by snowflake_configure(), not granted to PUBLIC';

CREATE FUNCTION snowflake_bad_shard(shard integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	RAISE EXCEPTION 'shard % is out of range', shard
		USING ERRCODE = '22023', DETAIL = 'A shard is an integer from 0 to 8191.';
END
$$;
COMMENT ON FUNCTION snowflake_bad_shard(integer) IS 'raises 22023 for a shard outside 0 to 8191, as the C extension''s snowflake(shard); never returns';

DO $$ BEGIN PERFORM snowflake_trusted_write_generators(); END $$;

-- As the C extension's: issuing on any other shard than the configured one is granted on
-- purpose, by the owner
REVOKE ALL ON FUNCTION snowflake(integer) FROM PUBLIC;

COMMENT ON FUNCTION snowflake() IS 'a new 64-bit ID: 41 bits of milliseconds since the epoch, 13 of shard, 10 of sequence, as the C extension''s snowflake(); strictly increasing in this database. 55000 until snowflake_configure(shard_id => N); the time may trail the clock by up to max_lag_ms';
COMMENT ON FUNCTION snowflake(integer) IS 'a new 64-bit ID on the given shard (0 to 8191, else 22023), from the same counter as snowflake() (works before snowflake_configure); EXECUTE is granted on purpose, not to PUBLIC';
COMMENT ON FUNCTION snowflake_uuidv7() IS 'a new RFC 9562 version 7 UUID (method 1: rand_a a 12-bit counter, 62 random bits): strictly increasing in this database, durable like a sequence; the time may trail the clock by up to max_lag_ms';
COMMENT ON FUNCTION ulid() IS 'a new ULID kept as uuid (the same 16 bytes in the same order): 48 bits of Unix ms, a 12-bit counter, 4 zero bits, 64 bits of which 62 random; strictly increasing in this database; the time may trail the clock by up to max_lag_ms. ulid_to_text() gives its 26 characters';

-- configuration

CREATE FUNCTION snowflake_configure(shard_id integer DEFAULT NULL, epoch timestamptz DEFAULT NULL,
	max_lag_ms integer DEFAULT NULL)
RETURNS snowflake_config
LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE AS $$
#variable_conflict use_column
DECLARE
	new_epoch bigint;
	result snowflake_config;
BEGIN
	PERFORM snowflake_refuse_open_schema();
	-- one call at a time: the epoch's checks below read what the last call wrote
	PERFORM FROM snowflake_config FOR UPDATE;
	IF shard_id IS NOT NULL AND shard_id NOT BETWEEN 0 AND 8191 THEN
		RAISE EXCEPTION 'shard % is out of range', shard_id
			USING ERRCODE = '22023', DETAIL = 'A shard is an integer from 0 to 8191.';
	END IF;
	IF max_lag_ms IS NOT NULL AND max_lag_ms NOT BETWEEN 1 AND 1000 THEN
		RAISE EXCEPTION 'max_lag_ms % is out of range', max_lag_ms
			USING ERRCODE = '22023', DETAIL = 'max_lag_ms is from 1 to 1000 milliseconds.';
	END IF;
	IF epoch IS NOT NULL THEN
		new_epoch := snowflake_checked_epoch(epoch);
		-- the fast path does not look for a clock before the epoch: refused here, once
		IF new_epoch > (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000000::double precision)::bigint / 1000 THEN
			RAISE EXCEPTION 'epoch % is after the clock', epoch
				USING ERRCODE = '22023', DETAIL = 'snowflake() counts milliseconds since the epoch: it must be in the past.';
		END IF;
		-- Only while no shard is set (before or with the first one) and no ID was issued: a
		-- statement that planned snowflake() before this call keeps the old epoch in its
		-- inlined body, and no lock taken here would hold it back. Before a shard is set, only
		-- snowflake(shard), which the owner grants, can be in flight.
		IF new_epoch <> (SELECT c.epoch_ms FROM snowflake_config c)
				AND ((SELECT c.shard_id FROM snowflake_config c) IS NOT NULL
					OR pg_sequence_last_value('snowflake_counter'::regclass) IS NOT NULL) THEN
			RAISE EXCEPTION 'the epoch cannot change once a shard is configured or an ID issued'
				USING ERRCODE = '55000',
				DETAIL = pg_catalog.format('The epoch is %s ms since 1970. IDs of another epoch would not be ordered after the ones issued with it, and their times would be read wrong.',
					(SELECT c.epoch_ms FROM snowflake_config c)),
				HINT = 'Give the epoch in the call that sets the first shard: snowflake_configure(shard_id => N, epoch => ...). Before any shard is set, a call of nextval() on snowflake_counter counts as an ID too: if none was kept, setval(''snowflake_counter'', 0, false) as the owner starts it afresh.';
		END IF;
	END IF;
	PERFORM set_config('snowflake_trusted.configuring', 'on', true);
	UPDATE snowflake_config c SET
		shard_id = coalesce(snowflake_configure.shard_id, c.shard_id),
		epoch_ms = coalesce(new_epoch, c.epoch_ms),
		max_lag_ms = coalesce(snowflake_configure.max_lag_ms, c.max_lag_ms);
	PERFORM set_config('snowflake_trusted.configuring', 'off', true);
	PERFORM snowflake_trusted_write_generators();
	SELECT * INTO result FROM snowflake_config;
	RETURN result;
END
$$;
REVOKE ALL ON FUNCTION snowflake_configure(integer, timestamptz, integer) FROM PUBLIC;

-- conversions shared by the decoders (IMMUTABLE: no setting is read)

-- Unix ms to timestamptz, exact (whole seconds through to_timestamp, then the milliseconds).
CREATE FUNCTION snowflake_unix_ms_to_timestamptz(ms bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_timestamp((ms / 1000)::double precision) + (ms % 1000) * interval '1 millisecond';
COMMENT ON FUNCTION snowflake_unix_ms_to_timestamptz(bigint) IS 'the time of a Unix millisecond, exact (a millisecond interval has no days or months: the time zone plays no part)';

CREATE FUNCTION snowflake_checked_epoch(epoch timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF NOT isfinite(epoch) OR extract(epoch FROM epoch) * 1000 <> floor(extract(epoch FROM epoch) * 1000)
			OR epoch < timestamptz '1970-01-01 00:00:00+00' OR epoch > timestamptz '2100-01-01 00:00:00+00' THEN
		RAISE EXCEPTION 'epoch is not a valid snowflake epoch' USING ERRCODE = '22023',
			DETAIL = 'An epoch is a finite time on a whole millisecond, from 1970-01-01 to 2100-01-01 00:00:00 UTC, as snowflake.epoch.';
	END IF;
	RETURN floor(extract(epoch FROM epoch) * 1000)::bigint;
END
$$;
COMMENT ON FUNCTION snowflake_checked_epoch(timestamptz) IS 'an epoch in Unix milliseconds; 22023 unless finite, on a whole millisecond, from 1970-01-01 to 2100-01-01 UTC (as the C extension''s snowflake.epoch)';

COMMENT ON FUNCTION snowflake_configure(integer, timestamptz, integer) IS 'sets the shard (0 to 8191, else 22023), the epoch (only before or with the first shard, and before any ID: else 55000; 22023 if not valid or after the clock) and max_lag_ms (1 to 1000, else 22023), then writes the generators again; arguments left NULL keep their value; returns the configuration''s row. The owner''s: not granted to PUBLIC';

-- snowflake decoding, as the C extension's (the epoch is the configured one: STABLE)

CREATE FUNCTION snowflake_checked_id(id bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	IF id < 0 THEN
		RAISE EXCEPTION 'snowflake ID % is negative', id
			USING ERRCODE = '22003', DETAIL = 'snowflake IDs are positive bigints.';
	END IF;
	RETURN id;
END
$$;
COMMENT ON FUNCTION snowflake_checked_id(bigint) IS 'the ID itself; 22003 when it is negative, as the C extension''s decoders';

CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN snowflake_unix_ms_to_timestamptz((snowflake_checked_id(id) >> 23) + (SELECT epoch_ms FROM snowflake_config));
COMMENT ON FUNCTION snowflake_timestamp(bigint) IS 'the millisecond of a snowflake ID, with the configured epoch; 22003 for a negative ID';

CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_unix_ms_to_timestamptz((snowflake_checked_id(id) >> 23) + snowflake_checked_epoch(epoch));
COMMENT ON FUNCTION snowflake_timestamp(bigint, timestamptz) IS 'the millisecond of a snowflake ID made with the given epoch (IMMUTABLE: for partition keys); 22003 for a negative ID, 22023 for an epoch that is not valid';

CREATE FUNCTION snowflake_shard(id bigint) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ((snowflake_checked_id(id) >> 10) & 8191)::integer;
COMMENT ON FUNCTION snowflake_shard(bigint) IS 'the shard of a snowflake ID (bits 22..10); 22003 for a negative ID';

CREATE FUNCTION snowflake_seq(id bigint) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (snowflake_checked_id(id) & 1023)::integer;
COMMENT ON FUNCTION snowflake_seq(bigint) IS 'the sequence of a snowflake ID within its millisecond (bits 9..0); 22003 for a negative ID';

CREATE FUNCTION snowflake_decode(id bigint, OUT ts timestamptz, OUT shard integer, OUT seq integer)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ROW(snowflake_timestamp(id), snowflake_shard(id), snowflake_seq(id));
COMMENT ON FUNCTION snowflake_decode(bigint) IS 'the time, shard and sequence of a snowflake ID, with the configured epoch; 22003 for a negative ID';

-- snowflake time bounds

-- (PL/pgSQL resolves names at run time, in the caller's search_path: the PL/pgSQL helpers
-- call nothing of this schema, so that schema-qualified calls work from any search_path.)
CREATE FUNCTION snowflake_id_at(ts timestamptz, epoch_ms bigint, source text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	ms bigint;
BEGIN
	IF NOT isfinite(ts) THEN
		RAISE EXCEPTION 'timestamp out of range: infinite timestamps have no ID' USING ERRCODE = '22008';
	END IF;
	ms := floor(extract(epoch FROM ts) * 1000)::bigint - epoch_ms;
	IF ms < 0 OR ms > 1099511627775 THEN
		RAISE EXCEPTION 'timestamp is outside the range of snowflake IDs' USING ERRCODE = '22008',
			DETAIL = format('snowflake IDs cover %s to %s ms since 1970 (%s plus 40 bits of milliseconds: the 41-bit time field''s top bit is the bigint''s sign bit, always 0).',
				epoch_ms, epoch_ms + 1099511627775, source);
	END IF;
	RETURN ms << 23;
END
$$;
COMMENT ON FUNCTION snowflake_id_at(timestamptz, bigint, text) IS 'the smallest snowflake ID of the millisecond that holds the time, with an epoch in Unix ms (source names it in the message); 22008 outside the IDs'' range (2^40 - 1 ms after the epoch: the sign bit stays 0) or for an infinite time';

CREATE FUNCTION snowflake_at(ts timestamptz) RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN snowflake_id_at(ts, (SELECT epoch_ms FROM snowflake_config), 'the configured epoch');
COMMENT ON FUNCTION snowflake_at(timestamptz) IS 'the smallest snowflake ID of the millisecond that holds the time, with the configured epoch: id >= snowflake_at(t) is a key range scan; 22008 outside the IDs'' range or for an infinite time';

CREATE FUNCTION snowflake_at(ts timestamptz, epoch timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_id_at(ts, snowflake_checked_epoch(epoch), 'the epoch');
COMMENT ON FUNCTION snowflake_at(timestamptz, timestamptz) IS 'the smallest snowflake ID of the millisecond that holds the time, with the given epoch (IMMUTABLE: for partition bounds); 22008 outside the range, 22023 for an epoch that is not valid';

-- the 128-bit kinds: time and bounds (RFC 9562 section 5.7; github.com/ulid/spec)

CREATE FUNCTION snowflake_unix_ms48(ts timestamptz) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	ms bigint;
BEGIN
	IF NOT isfinite(ts) THEN
		RAISE EXCEPTION 'timestamp out of range: infinite timestamps have no ID' USING ERRCODE = '22008';
	END IF;
	ms := floor(extract(epoch FROM ts) * 1000)::bigint;
	IF ms < 0 OR ms > 281474976710655 THEN
		RAISE EXCEPTION 'timestamp is outside the 48-bit millisecond range of UUIDv7 and ULID' USING ERRCODE = '22008',
			DETAIL = 'The range is 1970-01-01 00:00:00 UTC to 10889-08-02 05:31:50.655 UTC.';
	END IF;
	RETURN ms;
END
$$;
COMMENT ON FUNCTION snowflake_unix_ms48(timestamptz) IS 'the Unix millisecond of a time for a UUIDv7 or ULID; 22008 outside 48 bits of milliseconds or for an infinite time';

CREATE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN substr(id::text, 15, 1) = '7' AND substr(id::text, 20, 1) IN ('8', '9', 'a', 'b')
	THEN snowflake_unix_ms_to_timestamptz(('x' || translate(left(id::text, 13), '-', ''))::bit(48)::bigint) END;
COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS 'the millisecond of a version 7 UUID (RFC 9562); NULL for another version or variant';

CREATE FUNCTION uuidv7_at(ts timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (lpad(to_hex(snowflake_unix_ms48(ts)), 12, '0') || '70008000000000000000')::uuid;
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS 'the smallest version 7 UUID of the millisecond that holds the time, for key range scans; 22008 outside 48 bits of milliseconds';

CREATE FUNCTION ulid_timestamp(id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN snowflake_unix_ms_to_timestamptz(('x' || translate(left(id::text, 13), '-', ''))::bit(48)::bigint);
COMMENT ON FUNCTION ulid_timestamp(uuid) IS 'the millisecond of a ULID kept as uuid (its first 48 bits)';

CREATE FUNCTION ulid_at(ts timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (lpad(to_hex(snowflake_unix_ms48(ts)), 12, '0') || '00000000000000000000')::uuid;
COMMENT ON FUNCTION ulid_at(timestamptz) IS 'the smallest ULID (as uuid) of the millisecond that holds the time, for key range scans; 22008 outside 48 bits of milliseconds';

-- a ULID's text: 26 characters of Crockford base32 (github.com/ulid/spec), the first at most 7

CREATE FUNCTION ulid_to_text(id uuid) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substring(b.v FROM i * 5 + 1 FOR 5)::integer + 1, 1), '' ORDER BY i)
	FROM (SELECT B'00' || ('x' || translate(id::text, '-', ''))::bit(128) AS v) b, generate_series(0, 25) i;
END;
COMMENT ON FUNCTION ulid_to_text(uuid) IS 'the 26 characters of Crockford base32 of a ULID kept as uuid, upper case, as the C extension''s ulid type prints it';

CREATE FUNCTION text_to_ulid(id text) RETURNS uuid
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	bits bit varying := B'';
	u text := upper(id);
	problem text;
BEGIN
	IF length(id) <> 26 THEN
		problem := format('A ULID is 26 characters, not %s.', length(id));
	ELSIF u !~ '^[0-9A-HJKMNP-TV-Z]{26}$' THEN
		problem := format('"%s" at position %s is not a character of Crockford base32 (0-9, A-Z but I, L, O, U).',
			substr(id, position(substring(u FROM '[^0-9A-HJKMNP-TV-Z]') IN u), 1),
			position(substring(u FROM '[^0-9A-HJKMNP-TV-Z]') IN u));
	ELSIF left(u, 1) > '7' THEN
		problem := 'The first character of a ULID is at most 7 (a ULID has 128 bits).';
	END IF;
	IF problem IS NOT NULL THEN
		RAISE EXCEPTION 'invalid input syntax for type ulid: "%"', id USING ERRCODE = '22P02', DETAIL = problem;
	END IF;
	FOR i IN 1..26 LOOP
		bits := bits || (strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(u, i, 1)) - 1)::bit(5);
	END LOOP;
	RETURN (lpad(to_hex(substring(bits FROM 3 FOR 64)::bit(64)::bigint), 16, '0')
		|| lpad(to_hex(substring(bits FROM 67 FOR 64)::bit(64)::bigint), 16, '0'))::uuid;
END
$$;
COMMENT ON FUNCTION text_to_ulid(text) IS 'a ULID kept as uuid from its 26 characters of Crockford base32, either case; 22P02 for another length, a character outside the alphabet or a first character above 7, as the C extension''s ulid input';
