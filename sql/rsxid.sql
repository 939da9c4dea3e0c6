-- The rsxid type (github.com/rs/xid): text and binary I/O, casts, order, the btree, hash and
-- BRIN operator classes in use, min and max, rsxid_timestamp, rsxid_at, the decoders, and
-- every bad input with its SQLSTATE. The vectors are rs/xid's (id_test.go) and what Debian's
-- rs/xid 1.4.0 writes for chosen bytes (test/unit/xid_test.cpp, sno_test.cpp).
SET timezone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set outcome_sql :abs_srcdir '/sql/include/outcome_detail.sql'
\i :outcome_sql

SELECT typlen, typbyval, typalign, typstorage FROM pg_type WHERE typname = 'rsxid';

-- rs/xid's test ID and others, field for field, from text and from bytes; every decoder
-- (the type, text, bytea) and rsxid_timestamp agree
SELECT v AS rsxid, v::rsxid::text = v AS text_back, encode(v::rsxid::bytea, 'hex') AS bytes, d.*,
       rsxid_timestamp(v::rsxid) = d.ts AS same_ts,
       (rsxid_decode(v::rsxid::bytea), rsxid_decode(v::text), rsxid_timestamp(v::text))
         = (d, d, d.ts) AS forms_agree
  FROM unnest(ARRAY['9m4e2mr0ui3e8a215n4g', '00000000000000000000', '0000005anf6drrg0000g',
                    '04hkaps9lf6uu0938ljg', '0000000000000000000g', 'vvvvvvvvvvvvvvvvvvvg'])
         WITH ORDINALITY AS t(v, n),
       LATERAL rsxid_decode(v::rsxid) d
 ORDER BY n;
SELECT pg_column_size('9m4e2mr0ui3e8a215n4g'::rsxid) AS bytes,
       '\x4d88e15b60f486e428412dc9'::bytea::rsxid AS from_bytes,
       rsxid_send('9m4e2mr0ui3e8a215n4g') = '\x4d88e15b60f486e428412dc9'::bytea AS send_is_bytes,
       'vvvvvvvvvvvvvvvvvvvg'::rsxid = '\xffffffffffffffffffffffff'::bytea::rsxid AS max_from_bytes;

-- a literal goes to the text forms (a string type wins), read as the type reads it; a text
-- column too; a bytea column through rsxid_decode(bytea) or a cast
SELECT (rsxid_decode('9m4e2mr0ui3e8a215n4g')).pid AS pid_of_literal,
       rsxid_timestamp('9m4e2mr0ui3e8a215n4g') AS ts_of_literal,
       (SELECT (rsxid_decode(t)).counter FROM (VALUES ('9m4e2mr0ui3e8a215n4g'::text)) v(t)) AS of_text,
       (rsxid_decode('\x4d88e15b60f486e428412dc9'::bytea)).counter AS of_bytea;
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p WHERE p.proname LIKE 'rsxid\_%' AND p.proname NOT IN
       ('rsxid_in', 'rsxid_out', 'rsxid_recv', 'rsxid_send', 'rsxid_eq', 'rsxid_ne', 'rsxid_lt',
        'rsxid_le', 'rsxid_gt', 'rsxid_ge', 'rsxid_cmp', 'rsxid_sortsupport', 'rsxid_hash',
        'rsxid_hash_extended', 'rsxid_smaller', 'rsxid_larger')
 ORDER BY 1::text COLLATE "C";

-- casts: text both ways in assignments (ulid's), bytea to rsxid in assignments (sno's), rsxid
-- to bytea explicitly; no operator takes an rsxid and a bytea (not implicit)
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
  FROM pg_cast WHERE 'rsxid'::regtype IN (castsource, casttarget)
 ORDER BY castsource::regtype::text COLLATE "C", casttarget::regtype::text COLLATE "C";
CREATE TEMP TABLE assigned (id rsxid, t text);
INSERT INTO assigned VALUES ('9m4e2mr0ui3e8a215n4g'::text, '9m4e2mr0ui3e8a215n4g'::rsxid);
INSERT INTO assigned VALUES ('\x4d88e15b60f486e428412dca'::bytea, NULL);
INSERT INTO assigned SELECT decode('4d88e15b60f486e428412dcb', 'hex'), NULL;
SELECT id, t, id::bytea AS bytes FROM assigned ORDER BY id;
\set VERBOSITY terse
SELECT '9m4e2mr0ui3e8a215n4g'::rsxid = '\x4d88e15b60f486e428412dc9'::bytea;
\set VERBOSITY default
\echo SQLSTATE :LAST_ERROR_SQLSTATE
DROP TABLE assigned;

-- order: text order (C collation) = byte order = the type's sort order = rs/xid's
-- (bytes.Compare), over IDs that differ in each of the 96 bits and on either side of each
CREATE TEMP TABLE ids AS
  SELECT (set_byte('\x000000000000000000000000'::bytea, b / 8, 128 >> (b % 8)))::rsxid AS id
    FROM generate_series(0, 95) b
  UNION ALL
  SELECT (set_byte('\xffffffffffffffffffffffff'::bytea, b / 8, 255 - (128 >> (b % 8))))::rsxid
    FROM generate_series(0, 95) b
  UNION ALL SELECT '00000000000000000000' UNION ALL SELECT 'vvvvvvvvvvvvvvvvvvvg';
SELECT count(*) AS ids,
       (SELECT array_agg(id ORDER BY id) FROM ids)
         = (SELECT array_agg(id ORDER BY id::text COLLATE "C") FROM ids) AS text_order,
       (SELECT array_agg(id ORDER BY id) FROM ids)
         = (SELECT array_agg(id ORDER BY id::bytea) FROM ids) AS byte_order
  FROM ids;
SELECT count(*) FILTER (WHERE (a.id < b.id) <> (a.id::bytea < b.id::bytea)) AS lt_wrong,
       count(*) FILTER (WHERE (a.id <= b.id) <> (a.id::bytea <= b.id::bytea)) AS le_wrong,
       count(*) FILTER (WHERE (a.id = b.id) <> (a.id::bytea = b.id::bytea)) AS eq_wrong,
       count(*) FILTER (WHERE (a.id <> b.id) <> (a.id::bytea <> b.id::bytea)) AS ne_wrong,
       count(*) FILTER (WHERE (a.id >= b.id) <> (a.id::bytea >= b.id::bytea)) AS ge_wrong,
       count(*) FILTER (WHERE (a.id > b.id) <> (a.id::bytea > b.id::bytea)) AS gt_wrong,
       count(*) FILTER (WHERE sign(rsxid_cmp(a.id, b.id))
                            <> CASE WHEN a.id::bytea < b.id::bytea THEN -1
                                    WHEN a.id::bytea > b.id::bytea THEN 1 ELSE 0 END) AS cmp_wrong
  FROM ids a, ids b;

-- rsxid_at: the lowest rsxid of the second, its edges, below and above rs/xid's test ID
SELECT t, rsxid_at(t::timestamptz) AS at, rsxid_timestamp(rsxid_at(t::timestamptz)) AS second
  FROM unnest(ARRAY['1970-01-01 00:00:00+00', '1970-01-01 00:00:00.999999+00',
                    '1970-01-01 00:00:01+00', '2011-03-22 17:50:19.5+00',
                    '2106-02-07 06:28:15.999999+00']) t;
SELECT rsxid_at('2011-03-22 17:50:19+00') < '9m4e2mr0ui3e8a215n4g'::rsxid AS below_reference,
       rsxid_at('2011-03-22 17:50:20+00') > '9m4e2mr0ui3e8a215n4g'::rsxid AS next_second_above;

-- a table keyed by rsxid: one a second since 2024-01-01, machine n, pid n, counter n
CREATE TEMP TABLE items (id rsxid PRIMARY KEY, n int);
INSERT INTO items
  SELECT (substr(rsxid_at('2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second')::bytea, 1, 4)
          || substr(int4send(n), 2, 3) || substr(int4send(n), 3, 2) || substr(int4send(n), 2, 3))::rsxid, n
    FROM generate_series(1, 20000) n;
ANALYZE items;
SELECT count(*) AS decoded_right FROM items, rsxid_decode(id) d
 WHERE d.ts = '2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second'
   AND d.machine = substr(int4send(n), 2, 3) AND d.pid = n % 65536 AND d.counter = n;
-- btree: a range scan from rsxid_at
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items WHERE id >= rsxid_at('2024-01-01 05:00:00+00');
SELECT count(*) AS rows, min(n), max(n), min(rsxid_timestamp(id)) AS first
  FROM items WHERE id >= rsxid_at('2024-01-01 05:00:00+00');
RESET enable_seqscan;
-- hash: a hash join, and a hash index used for equality; hash_extended with seed 0 agrees
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT count(*) AS hash_joined FROM items a JOIN items b ON a.id::text::rsxid = b.id;
RESET enable_mergejoin;
RESET enable_nestloop;
CREATE TEMP TABLE items_hash AS SELECT * FROM items;
CREATE INDEX items_hash_id ON items_hash USING hash (id);
ANALYZE items_hash;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items_hash WHERE id = 'cm901080000g0080000g';
SELECT n FROM items_hash WHERE id = 'cm901080000g0080000g';
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE items_hash;
SELECT count(DISTINCT rsxid_hash(id)) > 19990 AS spread,
       bool_and(rsxid_hash_extended(id, 0) & 4294967295 = rsxid_hash(id)::bigint & 4294967295) AS seed0
  FROM items;
-- BRIN (rsxid_minmax_ops, the default) is used for a time range and for one rsxid, and finds
-- what a sequential scan finds
CREATE TEMP TABLE items_brin AS SELECT * FROM items ORDER BY id;
CREATE INDEX items_brin_id ON items_brin USING brin (id) WITH (pages_per_range = 4);
ANALYZE items_brin;
SELECT opc.opcname, opc.opcdefault FROM pg_index i JOIN pg_opclass opc ON opc.oid = i.indclass[0]
 WHERE i.indexrelid = 'items_brin_id'::regclass;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items_brin
 WHERE id >= rsxid_at('2024-01-01 05:00:00+00') AND id < rsxid_at('2024-01-01 05:10:00+00');
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= rsxid_at('2024-01-01 05:00:00+00') AND id < rsxid_at('2024-01-01 05:10:00+00');
SELECT n FROM items_brin WHERE id = (SELECT id FROM items WHERE n = 12345);
RESET enable_seqscan;
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= rsxid_at('2024-01-01 05:00:00+00') AND id < rsxid_at('2024-01-01 05:10:00+00');
DROP TABLE items_brin;

-- binary COPY out and in
\getenv abs_builddir PG_ABS_BUILDDIR
\set datafile :abs_builddir '/results/rsxid.data'
COPY items TO :'datafile' (FORMAT binary);
CREATE TEMP TABLE items_copy (id rsxid, n int);
COPY items_copy FROM :'datafile' (FORMAT binary);
SELECT count(*) AS copied_equal FROM items JOIN items_copy USING (id, n);

-- min and max agree with the sort order, ignore NULLs, and reach both ends of the type
INSERT INTO items_copy VALUES (NULL, 0), ('00000000000000000000', -1), ('vvvvvvvvvvvvvvvvvvvg', -2);
SELECT min(id) = (SELECT id FROM items_copy WHERE id IS NOT NULL ORDER BY id LIMIT 1) AS min_sorts_first,
       max(id) = (SELECT id FROM items_copy WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) AS max_sorts_last,
       min(id), max(id)
  FROM items_copy;
SELECT min(id), max(id), min(id) = (SELECT id FROM items WHERE n = 1) AS first_row,
       max(id) = (SELECT id FROM items WHERE n = 20000) AS last_row
  FROM items;
SELECT min(id) IS NULL AS min_of_nothing, max(id) IS NULL AS max_of_nothing FROM items WHERE false;
DROP TABLE items, items_copy, ids;

-- every bad input: 22P02 naming the length or the character and its position (in
-- characters), 22P03 for bytes of the wrong length, 22008 for a time no rsxid holds
SELECT call, pg_temp.outcome_detail('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  ('''9m4e2mr0ui3e8a215n4''::rsxid'),
  ('''9m4e2mr0ui3e8a215n4g0''::rsxid'),
  ('''''::rsxid'),
  ('''9M4E2MR0UI3E8A215N4G''::rsxid'),
  ('''9m4e2mr0ui3e8a215n4G''::rsxid'),
  ('''9m4e2mr0ui3e8a215n4w''::rsxid'),
  ('''9m4e2mr0u 3e8a215n4g''::rsxid'),
  ('''9m4e2mr0ui3e8a215n4h''::rsxid'),
  ('''vvvvvvvvvvvvvvvvvvvv''::rsxid'),
  ('''\x4d88e15b60f486e428412dc9''::rsxid'),
  ('''\x4d88e15b60f486e428412d''::bytea::rsxid'),
  ('''\x4d88e15b60f486e428412dc900''::bytea::rsxid'),
  ('''''::bytea::rsxid'),
  ('rsxid_decode(''9m4e2mr0ui3e8a215n4'')'),
  ('rsxid_decode(''9m4e2mr0ui3e8a215n4h'')'),
  ('rsxid_decode(''9m4e2mr0ui3e8a215n4g''::bytea)'),
  ('rsxid_decode(''\x4d88e15b60f486e428412d''::bytea)'),
  ('rsxid_timestamp(''9m4e2mr0ui3e8a215n4-'')'),
  ('rsxid_decode(NULL)'),
  ('rsxid_decode(NULL::rsxid)'),
  ('rsxid_timestamp(NULL)'),
  ('rsxid_at(NULL)'),
  ('rsxid_at(''1969-12-31 23:59:59.999999+00'')'),
  ('rsxid_at(''2106-02-07 06:28:16+00'')'),
  ('rsxid_at(''infinity'')'),
  ('rsxid_at(''-infinity'')')
) AS c(call);
-- binary input of another length, through binary COPY of a bytea column into an rsxid one:
-- 13 bytes are too many (22P03), 11 too few (08P01)
CREATE TEMP TABLE raw (b bytea);
CREATE TEMP TABLE typed (id rsxid);
INSERT INTO raw VALUES ('\x4d88e15b60f486e428412dc900');
COPY raw TO :'datafile' (FORMAT binary);
SELECT pg_temp.outcome_detail(format('COPY typed FROM %L (FORMAT binary)', :'datafile')) AS thirteen_bytes;
TRUNCATE raw;
INSERT INTO raw VALUES ('\x4d88e15b60f486e428412d');
COPY raw TO :'datafile' (FORMAT binary);
SELECT pg_temp.outcome_detail(format('COPY typed FROM %L (FORMAT binary)', :'datafile')) AS eleven_bytes;
TRUNCATE raw;
INSERT INTO raw VALUES ('\x4d88e15b60f486e428412dc9');
COPY raw TO :'datafile' (FORMAT binary);
COPY typed FROM :'datafile' (FORMAT binary);
SELECT id AS twelve_bytes FROM typed;
DROP TABLE raw, typed;
-- soft errors: whether a text is an rsxid, without an error (pg_input_is_valid from 16; on
-- 15, which has no soft errors, the same question answered by catching the error)
CREATE FUNCTION pg_temp.valid(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('server_version_num')::int >= 160000 THEN
    RETURN (SELECT r FROM (SELECT pg_input_is_valid(t, 'rsxid') AS r) s);
  END IF;
  BEGIN
    PERFORM t::rsxid;
    RETURN true;
  EXCEPTION WHEN invalid_text_representation THEN
    RETURN false;
  END;
END $$;
SELECT t, pg_temp.valid(t) FROM unnest(ARRAY['9m4e2mr0ui3e8a215n4g', '9m4e2mr0ui3e8a215n4',
                                             '9m4e2mr0ui3e8a215n4h', '9M4E2MR0UI3E8A215N4G']) t;

-- lengths and positions count characters, not bytes, in the server's encoding; a character of
-- more than one byte is named as itself, with its code point. In a UTF-8 database of its own
-- (the regression database's encoding follows the machine's locale).
CREATE DATABASE regress_rsxid_utf8 ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0;
\set regress_db :DBNAME
\c regress_rsxid_utf8
SET client_min_messages = warning;
CREATE EXTENSION snowflake;
RESET client_min_messages;
\i :outcome_sql
-- 20 characters, 21 bytes: the character; 19 characters, 20 bytes: the length
SELECT call, pg_temp.outcome_detail('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  (E'''9m4e2mr0ui3e8a215n4\u00e9''::rsxid'),
  (E'''9m4e2mr0ui3e8a215n\u00e9''::rsxid'),
  (E'''9m4e\u20ac2mr0ui3e8a215n4''::rsxid'),
  (E'rsxid_decode(''9m4e2mr0ui3e8a215n4\u00e9'')')
) AS c(call);
\c :regress_db
DROP DATABASE regress_rsxid_utf8;
