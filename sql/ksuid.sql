-- The ksuid type (github.com/segmentio/ksuid): text and binary I/O, casts, order, the btree,
-- hash and BRIN operator classes in use, min and max, ksuid_timestamp, ksuid_at, the
-- decoders, and every bad input with its SQLSTATE. The vectors are Segment's README's, its
-- tests', and what Debian's segmentio/ksuid 1.0.4 writes for chosen bytes
-- (test/unit/ksuid_test.cpp).
SET timezone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set outcome_sql :abs_srcdir '/sql/include/outcome_detail.sql'
\i :outcome_sql

SELECT typlen, typbyval, typalign, typstorage FROM pg_type WHERE typname = 'ksuid';

-- field for field, from text and from bytes; the decoders (the type, text) and
-- ksuid_timestamp agree
SELECT v AS ksuid, v::ksuid::text = v AS text_back, encode(v::ksuid::bytea, 'hex') AS bytes, d.*,
       ksuid_timestamp(v::ksuid) = d.ts AS same_ts,
       (ksuid_decode(v::text), ksuid_timestamp(v::text)) = (d, d.ts) AS forms_agree
  FROM unnest(ARRAY['0ujtsYcgvSTl8PAuAdqWYSMnLOv', '0ujzPyRiIAffKhBux4PvQdDqMHY',
                    '0pN1Own7255s7jwpwy495bAZeEa', '000000000000000000000000000',
                    '000000000000000000000000001', '0A42ooYeVw3Mne3Lq3NTHYStAVr',
                    'aWgEPTl1tmebfsQzFP4bxwgy80U', 'aWgEPTl1tmebfsQzFP4bxwgy80V'])
         WITH ORDINALITY AS t(v, n),
       LATERAL ksuid_decode(v::ksuid) d
 ORDER BY n;
SELECT pg_column_size('0ujtsYcgvSTl8PAuAdqWYSMnLOv'::ksuid) AS bytes,
       '\x0669f7efb5a1cd34b5f99d1154fb6853345c9735'::bytea::ksuid AS from_bytes,
       ksuid_send('0ujtsYcgvSTl8PAuAdqWYSMnLOv')
         = '\x0669f7efb5a1cd34b5f99d1154fb6853345c9735'::bytea AS send_is_bytes;

-- a literal goes to the text forms (a string type wins), read as the type reads it; a text
-- column too
SELECT ksuid_timestamp('0ujtsYcgvSTl8PAuAdqWYSMnLOv') AS ts_of_literal,
       (ksuid_decode('0ujtsYcgvSTl8PAuAdqWYSMnLOv')).payload AS payload_of_literal,
       (SELECT ksuid_timestamp(t) FROM (VALUES ('0ujzPyRiIAffKhBux4PvQdDqMHY'::text)) v(t)) AS of_text;
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p WHERE p.proname LIKE 'ksuid\_%' AND p.proname NOT IN
       ('ksuid_in', 'ksuid_out', 'ksuid_recv', 'ksuid_send', 'ksuid_eq', 'ksuid_ne', 'ksuid_lt',
        'ksuid_le', 'ksuid_gt', 'ksuid_ge', 'ksuid_cmp', 'ksuid_sortsupport', 'ksuid_hash',
        'ksuid_hash_extended', 'ksuid_smaller', 'ksuid_larger')
 ORDER BY 1::text COLLATE "C";

-- casts: text both ways in assignments (ulid's), bytea to ksuid in assignments (sno's), ksuid
-- to bytea explicitly; no operator takes a ksuid and a bytea (not implicit)
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
  FROM pg_cast WHERE 'ksuid'::regtype IN (castsource, casttarget)
 ORDER BY castsource::regtype::text COLLATE "C", casttarget::regtype::text COLLATE "C";
CREATE TEMP TABLE assigned (id ksuid, t text);
INSERT INTO assigned VALUES ('0ujtsYcgvSTl8PAuAdqWYSMnLOv'::text, '0ujtsYcgvSTl8PAuAdqWYSMnLOv'::ksuid);
INSERT INTO assigned VALUES ('\x0669f7efb5a1cd34b5f99d1154fb6853345c9736'::bytea, NULL);
INSERT INTO assigned SELECT decode('0669f7efb5a1cd34b5f99d1154fb6853345c9737', 'hex'), NULL;
SELECT id, t, id::bytea AS bytes FROM assigned ORDER BY id;
\set VERBOSITY terse
SELECT '0ujtsYcgvSTl8PAuAdqWYSMnLOv'::ksuid = '\x0669f7efb5a1cd34b5f99d1154fb6853345c9735'::bytea;
\set VERBOSITY default
\echo SQLSTATE :LAST_ERROR_SQLSTATE
DROP TABLE assigned;

-- order: text order (C collation) = byte order = the type's sort order = segmentio/ksuid's
-- (bytes.Compare), over IDs that differ in each of the 160 bits and on either side of each
CREATE TEMP TABLE ids AS
  SELECT (set_byte(decode(repeat('00', 20), 'hex'), b / 8, 128 >> (b % 8)))::ksuid AS id
    FROM generate_series(0, 159) b
  UNION ALL
  SELECT (set_byte(decode(repeat('ff', 20), 'hex'), b / 8, 255 - (128 >> (b % 8))))::ksuid
    FROM generate_series(0, 159) b
  UNION ALL SELECT '000000000000000000000000000' UNION ALL SELECT 'aWgEPTl1tmebfsQzFP4bxwgy80V';
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
       count(*) FILTER (WHERE sign(ksuid_cmp(a.id, b.id))
                            <> CASE WHEN a.id::bytea < b.id::bytea THEN -1
                                    WHEN a.id::bytea > b.id::bytea THEN 1 ELSE 0 END) AS cmp_wrong
  FROM ids a, ids b;

-- ksuid_at: the lowest KSUID of the second, its edges, below and above the README's KSUID
SELECT t, ksuid_at(t::timestamptz) AS at, ksuid_timestamp(ksuid_at(t::timestamptz)) AS second
  FROM unnest(ARRAY['2014-05-13 16:53:20+00', '2014-05-13 16:53:20.999999+00',
                    '2014-05-13 16:53:21+00', '2017-10-10 04:00:47.5+00',
                    '2150-06-19 23:21:35.999999+00']) t;
SELECT ksuid_at('2017-10-10 04:00:47+00') < '0ujtsYcgvSTl8PAuAdqWYSMnLOv'::ksuid AS below_reference,
       ksuid_at('2017-10-10 04:00:48+00') > '0ujtsYcgvSTl8PAuAdqWYSMnLOv'::ksuid AS next_second_above;

-- a table keyed by ksuid: one a second since 2024-01-01, the payload n's 4 bytes 4 times
CREATE TEMP TABLE items (id ksuid PRIMARY KEY, n int);
INSERT INTO items
  SELECT (substr(ksuid_at('2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second')::bytea, 1, 4)
          || int4send(n) || int4send(n) || int4send(n) || int4send(n))::ksuid, n
    FROM generate_series(1, 20000) n;
ANALYZE items;
SELECT count(*) AS decoded_right FROM items, ksuid_decode(id) d
 WHERE d.ts = '2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second'
   AND d.payload = int4send(n) || int4send(n) || int4send(n) || int4send(n);
-- btree: a range scan from ksuid_at
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items WHERE id >= ksuid_at('2024-01-01 05:00:00+00');
SELECT count(*) AS rows, min(n), max(n), min(ksuid_timestamp(id)) AS first
  FROM items WHERE id >= ksuid_at('2024-01-01 05:00:00+00');
RESET enable_seqscan;
-- hash: a hash join, and a hash index used for equality; hash_extended with seed 0 agrees
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT count(*) AS hash_joined FROM items a JOIN items b ON a.id::text::ksuid = b.id;
RESET enable_mergejoin;
RESET enable_nestloop;
CREATE TEMP TABLE items_hash AS SELECT * FROM items;
CREATE INDEX items_hash_id ON items_hash USING hash (id);
ANALYZE items_hash;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items_hash WHERE id = '2aKVLRfkHQqWXBntQwVU6FpatYv';
SELECT n FROM items_hash WHERE id = '2aKVLRfkHQqWXBntQwVU6FpatYv';
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE items_hash;
SELECT count(DISTINCT ksuid_hash(id)) > 19990 AS spread,
       bool_and(ksuid_hash_extended(id, 0) & 4294967295 = ksuid_hash(id)::bigint & 4294967295) AS seed0
  FROM items;
-- BRIN (ksuid_minmax_ops, the default) is used for a time range and for one KSUID, and finds
-- what a sequential scan finds
CREATE TEMP TABLE items_brin AS SELECT * FROM items ORDER BY id;
CREATE INDEX items_brin_id ON items_brin USING brin (id) WITH (pages_per_range = 4);
ANALYZE items_brin;
SELECT opc.opcname, opc.opcdefault FROM pg_index i JOIN pg_opclass opc ON opc.oid = i.indclass[0]
 WHERE i.indexrelid = 'items_brin_id'::regclass;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items_brin
 WHERE id >= ksuid_at('2024-01-01 05:00:00+00') AND id < ksuid_at('2024-01-01 05:10:00+00');
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= ksuid_at('2024-01-01 05:00:00+00') AND id < ksuid_at('2024-01-01 05:10:00+00');
SELECT n FROM items_brin WHERE id = (SELECT id FROM items WHERE n = 12345);
RESET enable_seqscan;
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= ksuid_at('2024-01-01 05:00:00+00') AND id < ksuid_at('2024-01-01 05:10:00+00');
DROP TABLE items_brin;

-- binary COPY out and in
\getenv abs_builddir PG_ABS_BUILDDIR
\set datafile :abs_builddir '/results/ksuid.data'
COPY items TO :'datafile' (FORMAT binary);
CREATE TEMP TABLE items_copy (id ksuid, n int);
COPY items_copy FROM :'datafile' (FORMAT binary);
SELECT count(*) AS copied_equal FROM items JOIN items_copy USING (id, n);

-- min and max agree with the sort order, ignore NULLs, and reach both ends of the type
INSERT INTO items_copy VALUES (NULL, 0), ('000000000000000000000000000', -1),
                              ('aWgEPTl1tmebfsQzFP4bxwgy80V', -2);
SELECT min(id) = (SELECT id FROM items_copy WHERE id IS NOT NULL ORDER BY id LIMIT 1) AS min_sorts_first,
       max(id) = (SELECT id FROM items_copy WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) AS max_sorts_last,
       min(id), max(id)
  FROM items_copy;
SELECT min(id) = (SELECT id FROM items WHERE n = 1) AS first_row,
       max(id) = (SELECT id FROM items WHERE n = 20000) AS last_row
  FROM items;
SELECT min(id) IS NULL AS min_of_nothing, max(id) IS NULL AS max_of_nothing FROM items WHERE false;
DROP TABLE items, items_copy, ids;

-- every bad input: 22P02 naming the length, the character and its position (in characters)
-- or a number above 2^160 - 1, 22P03 for bytes of the wrong length, 22008 for a time no
-- KSUID holds
SELECT call, pg_temp.outcome_detail('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  ('''0ujtsYcgvSTl8PAuAdqWYSMnLO''::ksuid'),
  ('''0ujtsYcgvSTl8PAuAdqWYSMnLOv0''::ksuid'),
  ('''''::ksuid'),
  ('''123''::ksuid'),
  ('''0ujtsYcgvSTl8PAuAdqWY-MnLOv''::ksuid'),
  ('''aWgEPTl1tmebfsQzFP4bxwgy80!''::ksuid'),
  ('''0??????????????????????????''::ksuid'),
  ('''0ujtsYcgvSTl8PAuAdqWYSMnLO ''::ksuid'),
  ('''aWgEPTl1tmebfsQzFP4bxwgy80W''::ksuid'),
  ('''aaaaaaaaaaaaaaaaaaaaaaaaaaa''::ksuid'),
  ('''zzzzzzzzzzzzzzzzzzzzzzzzzzz''::ksuid'),
  ('''\x0669f7efb5a1cd34b5f99d1154fb6853345c9735''::ksuid'),
  ('''\x0669f7efb5a1cd34b5f99d1154fb6853345c97''::bytea::ksuid'),
  ('''\x0669f7efb5a1cd34b5f99d1154fb6853345c973500''::bytea::ksuid'),
  ('''''::bytea::ksuid'),
  ('ksuid_decode(''0ujtsYcgvSTl8PAuAdqWYSMnLO'')'),
  ('ksuid_decode(''aWgEPTl1tmebfsQzFP4bxwgy80W'')'),
  ('ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLO_'')'),
  ('ksuid_decode(NULL)'),
  ('ksuid_decode(NULL::ksuid)'),
  ('ksuid_timestamp(NULL)'),
  ('ksuid_at(NULL)'),
  ('ksuid_at(''2014-05-13 16:53:19.999999+00'')'),
  ('ksuid_at(''2150-06-19 23:21:36+00'')'),
  ('ksuid_at(''infinity'')'),
  ('ksuid_at(''-infinity'')')
) AS c(call);
-- binary input of another length, through binary COPY of a bytea column into a ksuid one:
-- 21 bytes are too many (22P03), 19 too few (08P01)
CREATE TEMP TABLE raw (b bytea);
CREATE TEMP TABLE typed (id ksuid);
INSERT INTO raw VALUES ('\x0669f7efb5a1cd34b5f99d1154fb6853345c973500');
COPY raw TO :'datafile' (FORMAT binary);
SELECT pg_temp.outcome_detail(format('COPY typed FROM %L (FORMAT binary)', :'datafile')) AS twenty_one_bytes;
TRUNCATE raw;
INSERT INTO raw VALUES ('\x0669f7efb5a1cd34b5f99d1154fb6853345c97');
COPY raw TO :'datafile' (FORMAT binary);
SELECT pg_temp.outcome_detail(format('COPY typed FROM %L (FORMAT binary)', :'datafile')) AS nineteen_bytes;
TRUNCATE raw;
INSERT INTO raw VALUES ('\x0669f7efb5a1cd34b5f99d1154fb6853345c9735');
COPY raw TO :'datafile' (FORMAT binary);
COPY typed FROM :'datafile' (FORMAT binary);
SELECT id AS twenty_bytes FROM typed;
DROP TABLE raw, typed;
-- soft errors: whether a text is a KSUID, without an error (pg_input_is_valid from 16; on
-- 15, which has no soft errors, the same question answered by catching the error)
CREATE FUNCTION pg_temp.valid(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('server_version_num')::int >= 160000 THEN
    RETURN (SELECT r FROM (SELECT pg_input_is_valid(t, 'ksuid') AS r) s);
  END IF;
  BEGIN
    PERFORM t::ksuid;
    RETURN true;
  EXCEPTION WHEN invalid_text_representation THEN
    RETURN false;
  END;
END $$;
SELECT t, pg_temp.valid(t) FROM unnest(ARRAY['0ujtsYcgvSTl8PAuAdqWYSMnLOv', '0ujtsYcgvSTl8PAuAdqWYSMnLO',
                                             '0ujtsYcgvSTl8PAuAdqWYSMnLO-', 'aWgEPTl1tmebfsQzFP4bxwgy80W']) t;

-- lengths and positions count characters, not bytes, in the server's encoding; a character of
-- more than one byte is named as itself, with its code point. In a UTF-8 database of its own
-- (the regression database's encoding follows the machine's locale).
CREATE DATABASE regress_ksuid_utf8 ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0;
\set regress_db :DBNAME
\c regress_ksuid_utf8
SET client_min_messages = warning;
CREATE EXTENSION snowflake;
RESET client_min_messages;
\i :outcome_sql
-- 27 characters, 28 bytes: the character; 26 characters, 27 bytes (which segmentio/ksuid,
-- counting bytes, reads as a KSUID): the length
SELECT call, pg_temp.outcome_detail('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  (E'''0ujtsYcgvSTl8PAuAdqWYSMnLO\u00e9''::ksuid'),
  (E'''0ujtsYcgvSTl8PAuAdqWYSMnL\u00e9''::ksuid'),
  (E'''0ujt\u20acsYcgvSTl8PAuAdqWYSMnLO''::ksuid'),
  (E'ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLO\u00e9'')')
) AS c(call);
\c :regress_db
DROP DATABASE regress_ksuid_utf8;
