-- The sno type (github.com/muyo/sno): text and binary I/O, casts, ordering, indexes, the
-- decoders, and every bad input. The vectors follow the published spec (its own worked examples,
-- and IDs laid out by its rules); see test/unit/sno_test.cpp. (rs/xid's xids: rsxid.sql.)
SET timezone = 'UTC';

SELECT typlen, typbyval, typalign, typstorage FROM pg_type WHERE typname = 'sno';

-- the reference's IDs decoded field for field: NewWithTime at 2020-02-29 12:34:56.789 (meta
-- 200, partition 65000), at the epoch and at the last unit; its test's three; the tick bit
SELECT v AS sno, v::sno::text = v AS text_back, encode(v::sno::bytea, 'hex') AS bytes, d.*,
       sno_timestamp(v::sno) = d.ts AS same_ts
  FROM unnest(ARRAY['6ncg4s4cr5wwi222', '2222222225wwi223', 'xxxxxxxwxxwwi224',
                    '2222222222222222', 'brpk4q72xwf2m63l', 'xxxxxxxxxxxxxxxx',
                    '2222222322222222']) WITH ORDINALITY AS t(v, n),
       LATERAL sno_decode(v::sno) d
 ORDER BY n;
SELECT pg_column_size('brpk4q72xwf2m63l'::sno) AS bytes,
       '\x4e6f2160a0ff9a0a1033'::bytea::sno AS from_bytes,
       sno_send('brpk4q72xwf2m63l') = '\x4e6f2160a0ff9a0a1033'::bytea AS send_is_bytes;

-- ordering: text order (C collation) = byte order = the type's sort order, over IDs that
-- differ in each of the 80 bits and on either side of each bit
CREATE TEMP TABLE ids AS
  SELECT (set_byte('\x00000000000000000000'::bytea, b / 8, 128 >> (b % 8)))::sno AS id
    FROM generate_series(0, 79) b
  UNION ALL
  SELECT (set_byte('\xffffffffffffffffffff'::bytea, b / 8, 255 - (128 >> (b % 8))))::sno
    FROM generate_series(0, 79) b
  UNION ALL SELECT '2222222222222222' UNION ALL SELECT 'xxxxxxxxxxxxxxxx';
SELECT count(*) AS ids,
       (SELECT array_agg(id ORDER BY id) FROM ids)
         = (SELECT array_agg(id ORDER BY id::text COLLATE "C") FROM ids) AS text_order,
       (SELECT array_agg(id ORDER BY id) FROM ids)
         = (SELECT array_agg(id ORDER BY id::bytea) FROM ids) AS byte_order
  FROM ids;
-- only under a byte-wise collation: one that reads digits as numbers (ICU's kn) puts
-- 3a... before 23..., and the IDs' text in another order
CREATE COLLATION regress_sno_numeric (provider = icu, locale = 'und-u-kn');
SELECT '3a22222222222222' < '2322222222222222' COLLATE regress_sno_numeric AS numeric_3a_first,
       '3a22222222222222'::sno > '2322222222222222'::sno AS sno_3a_last,
       (SELECT array_agg(id ORDER BY id) FROM ids)
         = (SELECT array_agg(id ORDER BY id::text COLLATE regress_sno_numeric) FROM ids) AS numeric_text_order;
DROP COLLATION regress_sno_numeric;
SELECT count(*) FILTER (WHERE (a.id < b.id) <> (a.id::bytea < b.id::bytea)) AS lt_wrong,
       count(*) FILTER (WHERE (a.id <= b.id) <> (a.id::bytea <= b.id::bytea)) AS le_wrong,
       count(*) FILTER (WHERE (a.id = b.id) <> (a.id::bytea = b.id::bytea)) AS eq_wrong,
       count(*) FILTER (WHERE (a.id <> b.id) <> (a.id::bytea <> b.id::bytea)) AS ne_wrong,
       count(*) FILTER (WHERE (a.id >= b.id) <> (a.id::bytea >= b.id::bytea)) AS ge_wrong,
       count(*) FILTER (WHERE (a.id > b.id) <> (a.id::bytea > b.id::bytea)) AS gt_wrong,
       count(*) FILTER (WHERE sign(sno_cmp(a.id, b.id))
                            <> CASE WHEN a.id::bytea < b.id::bytea THEN -1
                                    WHEN a.id::bytea > b.id::bytea THEN 1 ELSE 0 END) AS cmp_wrong
  FROM ids a, ids b;

-- sno_at: the lowest sno of the 4 ms unit, its edges, and an index range scan
SELECT t, sno_at(t::timestamptz) AS at, sno_timestamp(sno_at(t::timestamptz)) AS unit
  FROM unnest(ARRAY['2010-01-01 00:00:00+00', '2010-01-01 00:00:00.003999+00',
                    '2010-01-01 00:00:00.004+00', '2020-02-29 12:34:56.789+00',
                    '2079-09-07 15:47:35.551999+00']) t;
SELECT sno_at('2020-02-29 12:34:56.789+00') < '6ncg4s4cr5wwi222'::sno AS below_reference,
       sno_at('2020-02-29 12:34:56.792+00') > '6ncg4s4cr5wwi222'::sno AS next_unit_above;
CREATE TEMP TABLE items (id sno PRIMARY KEY, n int);
-- a sno a second since 2024-01-01, meta n % 256, partition n, sequence n
INSERT INTO items
  SELECT (substr(sno_at('2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second')::bytea, 1, 5)
          || set_byte(set_byte(set_byte(set_byte(set_byte('\x0000000000'::bytea,
               0, n % 256), 1, n >> 8), 2, n % 256), 3, n >> 8), 4, n % 256))::sno, n
    FROM generate_series(1, 20000) n;
ANALYZE items;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items WHERE id >= sno_at('2024-01-01 05:00:00+00');
SELECT count(*) AS rows, min(n), max(n), min(sno_timestamp(id)) AS first
  FROM items WHERE id >= sno_at('2024-01-01 05:00:00+00');
RESET enable_seqscan;
SELECT count(*) AS decoded_right FROM items, sno_decode(id) d
 WHERE d.ts = '2024-01-01 00:00:00+00'::timestamptz + n * interval '1 second'
   AND d.meta = n % 256 AND d.partition = n AND d.sequence = n AND NOT d.tick;
-- hashing agrees with equality: a hash join and a hash index
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT count(*) AS hash_joined FROM items a JOIN items b ON a.id::text::sno = b.id;
RESET enable_mergejoin;
RESET enable_nestloop;
CREATE INDEX ON items USING hash (id);
SELECT count(DISTINCT sno_hash(id)) > 19990 AS spread,
       bool_and(sno_hash_extended(id, 0) & 4294967295 = sno_hash(id)::bigint & 4294967295) AS seed0
  FROM items;
-- a BRIN index (sno_minmax_ops, the default) is used for a time range and for one sno, and
-- finds the rows a sequential scan finds
CREATE TEMP TABLE items_brin AS SELECT * FROM items ORDER BY id;
CREATE INDEX items_brin_id ON items_brin USING brin (id) WITH (pages_per_range = 4);
ANALYZE items_brin;
SELECT opc.opcname, opc.opcdefault FROM pg_index i JOIN pg_opclass opc ON opc.oid = i.indclass[0]
 WHERE i.indexrelid = 'items_brin_id'::regclass;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items_brin
 WHERE id >= sno_at('2024-01-01 05:00:00+00') AND id < sno_at('2024-01-01 05:10:00+00');
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= sno_at('2024-01-01 05:00:00+00') AND id < sno_at('2024-01-01 05:10:00+00');
SELECT n FROM items_brin WHERE id = (SELECT id FROM items WHERE n = 12345);
SELECT count(*) AS at_or_below FROM items_brin WHERE id <= (SELECT id FROM items WHERE n = 777);
RESET enable_seqscan;
SELECT count(*) AS rows, min(n), max(n) FROM items_brin
 WHERE id >= sno_at('2024-01-01 05:00:00+00') AND id < sno_at('2024-01-01 05:10:00+00');
DROP TABLE items_brin;

-- binary COPY out and in
\getenv abs_builddir PG_ABS_BUILDDIR
\set datafile :abs_builddir '/results/sno.data'
COPY items TO :'datafile' (FORMAT binary);
CREATE TEMP TABLE items_copy (id sno, n int);
COPY items_copy FROM :'datafile' (FORMAT binary);
SELECT count(*) AS copied_equal FROM items JOIN items_copy USING (id, n);
DROP TABLE items, items_copy, ids;

-- bytea's hex text of the 10 bytes is a sno too, in either case (pgx sends muyo/sno's driver
-- value so, and so does a simple-protocol client that quotes bytes); a bytea is stored in a
-- sno column (an assignment cast), but no operator takes a sno and a bytea (not implicit)
SELECT '\x4e6f2160a0ff9a0a1033'::sno AS from_hex, '\x4E6F2160A0FF9A0A1033'::sno AS from_upper_hex;
CREATE TEMP TABLE from_bytes (id sno);
INSERT INTO from_bytes VALUES ('\x4e6f2160a0ff9a0a1033'::bytea);
INSERT INTO from_bytes SELECT decode('4e6f2160a0ff9a0a1034', 'hex');
UPDATE from_bytes SET id = '\x4e6f2160a0ff9a0a1035'::bytea WHERE id = '\x4e6f2160a0ff9a0a1034';
SELECT id, id::bytea AS bytes FROM from_bytes ORDER BY id;
\set VERBOSITY terse
SELECT 'brpk4q72xwf2m63l'::sno = '\x4e6f2160a0ff9a0a1033'::bytea;
\set VERBOSITY default
\echo SQLSTATE :LAST_ERROR_SQLSTATE
INSERT INTO from_bytes VALUES ('\x4e6f'::bytea);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
DROP TABLE from_bytes;

-- bad input: 22P02 naming the length or the character and its position, 22P03 for bytes of
-- the wrong length; 22008 for times
SELECT '6ncg4s4cr5wwi22'::sno;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '6ncg4s4cr5wwi2222'::sno;
SELECT ''::sno;
SELECT '6ncg4s4cr5wwi22y'::sno;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '6ncG4s4cr5wwi222'::sno;
SELECT '1ncg4s4cr5wwi222'::sno;
SELECT '6ncg4s4c 5wwi222'::sno;
SELECT '\x4e6f2160a0ff9a0a10'::sno;
SELECT '\x4e6f2160a0ff9a0a10zz'::sno;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '\x4e6f2160a0ff9a0a10'::bytea::sno;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '\x4e6f2160a0ff9a0a103300'::bytea::sno;
SELECT sno_at('2009-12-31 23:59:59.999+00');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT sno_at('2079-09-07 15:47:35.552+00');
SELECT sno_at('infinity');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- soft errors: whether the text is a sno, without an error (pg_input_is_valid from 16; on 15,
-- which has no soft errors, the same question answered by catching the error)
CREATE FUNCTION pg_temp.valid(t text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('server_version_num')::int >= 160000 THEN
    RETURN (SELECT r FROM (SELECT pg_input_is_valid(t, 'sno') AS r) s);
  END IF;
  BEGIN
    PERFORM t::sno;
    RETURN true;
  EXCEPTION WHEN invalid_text_representation THEN
    RETURN false;
  END;
END $$;
SELECT t, pg_temp.valid(t) FROM unnest(ARRAY['6ncg4s4cr5wwi222', '6ncg4s4cr5wwi22',
                                             '6ncg4s4cr5wwi22z']) t;

-- Lengths and positions count characters, not bytes, in the server's encoding; a character
-- of more than one byte is named as itself, with its code point. In a UTF-8 database of its
-- own (the regression database's encoding follows the machine's locale).
CREATE DATABASE regress_sno_utf8 ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0;
\set regress_db :DBNAME
\c regress_sno_utf8
SET client_min_messages = warning;
CREATE EXTENSION snowflake;
RESET client_min_messages;
-- 16 characters, 17 bytes: the character; 15 characters, 16 bytes: the length
SELECT E'6ncg4s4cr5wwi22\u00e9'::sno;
SELECT E'6ncg4s4cr5wwi2\u00e9'::sno;
SELECT E'6ncg\u20ac4s4cr5wwi22'::sno;
SELECT E'6ncG\u00e94s4cr5wwi22'::sno;
SELECT E'\u00e96ncg4s4cr5wwi222'::sno;
-- ulid: 26 characters, 27 bytes, is a bad character; 25 characters, 26 bytes, a bad length
SELECT E'01ARZ3NDEKTSV4RRFFQ69G5FA\u00e9'::ulid;
SELECT E'01ARZ3NDEKTSV4RRFFQ69G5F\u00e9'::ulid;
\c :regress_db
SET timezone = 'UTC';
DROP DATABASE regress_sno_utf8;

-- sno(meta): the server's stream. test/preload.conf sets snowflake.shard_id = 5: every sno is on
-- partition 5, with the metabyte asked, the tick-tock bit clear, the time of the call (a
-- 4 ms unit); (time, sequence) strictly increases in call order whatever the metabyte, and
-- the snos of one metabyte strictly increase (the metabyte comes before the sequence in the
-- bytes: within a 4 ms unit snos sort by metabyte first)
CREATE TEMP TABLE made AS
  SELECT n, clock_timestamp() AS before, sno(n % 256) AS id, clock_timestamp() AS after
    FROM generate_series(1, 10000) n;
SELECT count(*) AS snos, count(DISTINCT id) AS distinct_snos,
       count(DISTINCT (d.ts, d.sequence)) AS distinct_unit_and_sequence,
       bool_and(d.meta = n % 256) AS meta_asked, bool_and(d.partition = 5) AS partition_is_shard,
       bool_and(NOT d.tick) AS tick_clear,
       bool_and(d.ts >= before - interval '4 ms' AND d.ts <= after + interval '1 second') AS in_window,
       bool_and(extract(microseconds FROM d.ts)::bigint % 4000 = 0) AS on_a_unit,
       bool_and(sno_timestamp(id) = d.ts) AS same_ts
  FROM made, sno_decode(id) d;
SELECT count(*) FILTER (WHERE (d.ts, d.sequence) <= (p.ts, p.sequence)) AS stream_not_increasing,
       count(*) FILTER (WHERE id <= prev_of_meta) AS meta_not_increasing,
       count(*) FILTER (WHERE id::text COLLATE "C" <= prev_of_meta::text COLLATE "C") AS text_not_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev,
               lag(id) OVER (PARTITION BY n % 256 ORDER BY n) AS prev_of_meta FROM made) t,
       sno_decode(id) d, sno_decode(prev) p
 WHERE prev IS NOT NULL;
-- the default metabyte is 0; a column default; a NULL metabyte gives NULL (STRICT)
SELECT (sno_decode(sno())).meta AS default_meta, sno(NULL) IS NULL AS null_meta,
       (SELECT (ts, sequence) FROM sno_decode(sno()))
         > (SELECT (d.ts, d.sequence) FROM made, sno_decode(id) d
             ORDER BY d.ts DESC, d.sequence DESC LIMIT 1) AS after_the_others;
CREATE TEMP TABLE orders (id sno PRIMARY KEY DEFAULT sno(3), item text);
INSERT INTO orders (item) SELECT 'item ' || n FROM generate_series(1, 100) n;
SELECT count(*) AS orders, bool_and((sno_decode(id)).meta = 3) AS meta_3,
       (SELECT array_agg(item ORDER BY id) FROM orders)
         = (SELECT array_agg('item ' || n ORDER BY n) FROM generate_series(1, 100) n) AS id_order_is_insert_order
  FROM orders;
-- a sno() text literal is still a cast, not a call of the generator
SELECT sno('6ncg4s4cr5wwi222') AS cast_from_text;
SELECT p.provolatile, p.proparallel, p.proisstrict
  FROM pg_proc p WHERE p.oid = 'sno(integer)'::regprocedure;
-- a metabyte outside 0..255
SELECT sno(256);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT sno(-1);
\echo SQLSTATE :LAST_ERROR_SQLSTATE

-- min and max agree with the sort order, ignore NULLs, and reach both ends of the type
CREATE TEMP TABLE sno_mm AS SELECT sno(n % 256) AS s FROM generate_series(1, 1000) n;
INSERT INTO sno_mm VALUES (NULL), ('2222222222222222'), ('xxxxxxxxxxxxxxxx');
SELECT min(s) = (SELECT s FROM sno_mm WHERE s IS NOT NULL ORDER BY s LIMIT 1) AS min_sorts_first,
       max(s) = (SELECT s FROM sno_mm WHERE s IS NOT NULL ORDER BY s DESC LIMIT 1) AS max_sorts_last,
       min(s), max(s)
  FROM sno_mm;
DELETE FROM sno_mm WHERE s IN ('2222222222222222', 'xxxxxxxxxxxxxxxx');
SELECT min(s) = (SELECT s FROM sno_mm WHERE s IS NOT NULL ORDER BY s LIMIT 1) AS min_sorts_first,
       max(s) = (SELECT s FROM sno_mm WHERE s IS NOT NULL ORDER BY s DESC LIMIT 1) AS max_sorts_last,
       min(s) < max(s) AS distinct_ends
  FROM sno_mm;
SELECT min(s) IS NULL AS min_of_nothing, max(s) IS NULL AS max_of_nothing FROM sno_mm WHERE false;
