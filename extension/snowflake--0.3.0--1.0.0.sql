-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.0.0'" to load this file. \quit

-- 1.0.0: one name scheme, promised stable from here on.

-- The C functions are named after their SQL functions (the old names stay in the library,
-- for the catalogs of earlier versions until they are updated).
CREATE OR REPLACE FUNCTION snowflake() RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_generate' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION snowflake(shard integer) RETURNS bigint
	AS 'MODULE_PATHNAME', 'snowflake_generate_shard' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION uuidv7_from_time(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_from_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
	AS 'MODULE_PATHNAME', 'uuidv7_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION uuidv7_at(ts timestamptz) RETURNS uuid
	AS 'MODULE_PATHNAME', 'uuidv7_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ulid(ts) is ulid_from_time(ts), beside uuidv7_from_time(ts): ulid('...') is the syntax of
-- a cast from text. Renamed, not dropped and made anew, so that column defaults and views
-- that call it follow the new name.
ALTER FUNCTION ulid(timestamptz) RENAME TO ulid_from_time;
CREATE OR REPLACE FUNCTION ulid_from_time(ts timestamptz) RETURNS ulid
	AS 'MODULE_PATHNAME', 'ulid_from_time' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- uuid_version(uuid) goes: it sat in core's uuid_ namespace, and PostgreSQL 17 and later have
-- uuid_extract_version(). The update stops, changing nothing, while anything uses it.
DO $check$
DECLARE
	users text;
BEGIN
	-- a view is named as the view, not as its rewrite rule
	SELECT string_agg(DISTINCT coalesce(
	           (SELECT pg_describe_object('pg_class'::regclass, r.ev_class, 0)
	              FROM pg_rewrite r WHERE d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid),
	           pg_describe_object(d.classid, d.objid, d.objsubid)), ', ')
	  INTO users
	  FROM pg_depend d
	 WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = 'uuid_version(uuid)'::regprocedure
	   AND d.deptype = 'n';
	IF users IS NOT NULL THEN
		RAISE EXCEPTION 'snowflake 1.0.0 drops uuid_version(uuid), which % still uses', users
			USING ERRCODE = 'dependent_objects_still_exist',
			      HINT = 'On PostgreSQL 17 and later use uuid_extract_version(u); before 17, get_byte(uuid_send(u), 6) >> 4 '
			             '(the version field of any UUID). Change those objects, then run ALTER EXTENSION snowflake UPDATE again.';
	END IF;
END
$check$;
DROP FUNCTION uuid_version(uuid);

-- snowflake_adopt() refuses a uuid or ulid key whose values hold times after now.
CREATE OR REPLACE FUNCTION snowflake_adopt(tbl regclass, col name, dry_run boolean DEFAULT true,
	drop_sequence boolean DEFAULT false, widen boolean DEFAULT false) RETURNS SETOF text
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
	stmts text[];
	locked boolean := false;
	s text;
	r record;
BEGIN
	IF tbl IS NULL OR col IS NULL OR dry_run IS NULL OR drop_sequence IS NULL OR widen IS NULL THEN
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

-- snowflake_status() shows where the shards come from, and the etcd lease
-- (snowflake.shard_source = etcd).
DROP FUNCTION snowflake_status();
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
	OUT etcd_requests bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'snowflake_status' LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 1;
REVOKE ALL ON FUNCTION snowflake_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_status() TO pg_monitor;
COMMENT ON FUNCTION snowflake_status() IS 'one row: whether the server generates (and why not), the IDs'' clock over the system clock and its steps, waits at snowflake.max_lead, the durable reservation with its writer, writes, waits, failures and replay, observed IDs, and where the shards come from with the etcd lease''s state; for pg_monitor';
