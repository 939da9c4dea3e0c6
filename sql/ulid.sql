-- The ulid type: text and binary I/O, casts, operators, indexes, joins, and ulid().
SET timezone = 'UTC';

-- the spec's example, decoded to its millisecond; input in either case, output upper case
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid AS ulid,
       ulid_timestamp('01ARZ3NDEKTSV4RRFFQ69G5FAV') AS ts;
SELECT '01arz3ndektsv4rrffq69g5fav'::ulid AS lower_in, '01ARYZ6S41TSV4RRFFQ69G5FAV'::ulid::timestamptz AS ts;
SELECT '00000000000000000000000000'::ulid AS min, '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid AS max;
SELECT pg_column_size('01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid) AS bytes;
SELECT typlen, typbyval, typalign, typstorage FROM pg_type WHERE typname = 'ulid';

-- round trips: text, uuid (the same 16 bytes), bytea, binary send
SELECT u::uuid AS as_uuid, u::uuid::ulid = u AS uuid_back, u::bytea AS as_bytea,
       u::bytea::ulid = u AS bytea_back, u::text::ulid = u AS text_back,
       ulid_send(u) = u::bytea AS send_is_bytes
  FROM (SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid AS u) s;
SELECT '0155f1ea-bad5-d3d6-764c-61efb99302bd'::uuid::ulid AS from_uuid;
SELECT count(*) AS round_trips_ok FROM (SELECT ulid() AS u FROM generate_series(1, 10000)) s
 WHERE u::text::ulid = u AND u::uuid::ulid = u AND u::bytea::ulid = u
   AND u::uuid::text = (u::text::ulid)::uuid::text;

-- timestamps: casts both ways, ulid_from_time(ts) and ulid_at(ts)
SELECT '2024-05-06 07:08:09.123456+00'::timestamptz::ulid AS smallest_of_ms,
       ulid_at('2024-05-06 07:08:09.123+00') AS ulid_at;
SELECT ulid_timestamp(ulid_from_time('2024-05-06 07:08:09.123456+00')) AS ts,
       ulid_from_time('2024-05-06 07:08:09+00') <> ulid_from_time('2024-05-06 07:08:09+00') AS random;
-- ulid('...') is the syntax of a cast from text, and no generator's: a time is no ULID
SELECT ulid('2024-05-06 07:08:09+00');
\echo SQLSTATE :LAST_ERROR_SQLSTATE

-- ulid(): 100,000 values, unique, strictly increasing in issue order, and within one
-- millisecond each is the previous plus one (the spec's monotonic rule)
CREATE TEMP TABLE gen AS SELECT n, ulid() AS u FROM generate_series(1, 100000) n;
SELECT count(DISTINCT u) AS distinct_values,
       count(*) FILTER (WHERE u <= prev) AS out_of_order,
       count(*) FILTER (WHERE u::text <= prev::text) AS text_out_of_order
  FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM gen) s;
SELECT count(*) FILTER (WHERE ulid_timestamp(u) = ulid_timestamp(prev)
                          AND ('x' || right(encode(u::bytea, 'hex'), 15))::bit(60)::bigint
                            - ('x' || right(encode(prev::bytea, 'hex'), 15))::bit(60)::bigint <> 1)
         AS same_ms_not_plus_one
  FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM gen) s;
-- sorting by the type agrees with sorting by the text and by the bytes
SELECT count(*) AS sort_disagreements FROM (
  SELECT row_number() OVER (ORDER BY u) AS a, row_number() OVER (ORDER BY u::text COLLATE "C") AS b,
         row_number() OVER (ORDER BY u::bytea) AS c FROM gen) s
 WHERE a <> b OR a <> c;

-- min and max (using the btree order; parallel-safe)
SELECT min(u) = (SELECT u FROM gen ORDER BY n LIMIT 1) AS min_is_first,
       max(u) = (SELECT u FROM gen ORDER BY n DESC LIMIT 1) AS max_is_last FROM gen;

-- operators
SELECT a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge,
       ulid_cmp(a, b) AS cmp, ulid_cmp(b, a) AS cmp_rev, ulid_cmp(a, a) AS cmp_same
  FROM (SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid AS a, '01ARZ3NDEKTSV4RRFFQ69G5FAW'::ulid AS b) s;
SELECT o.oprname, o.oprleft::regtype AS left, o.oprright::regtype AS right, o.oprcanhash,
       o.oprcanmerge, c.oprname AS commutator, n.oprname AS negator, o.oprrest, o.oprjoin
  FROM pg_operator o LEFT JOIN pg_operator c ON c.oid = o.oprcom LEFT JOIN pg_operator n ON n.oid = o.oprnegate
 WHERE 'ulid'::regtype IN (o.oprleft, o.oprright)
 ORDER BY o.oprname, o.oprleft::regtype::text, o.oprright::regtype::text;

-- indexes: btree, hash and BRIN, each used and each right
CREATE TABLE items (id ulid PRIMARY KEY, n int);
-- (one time for the rows and the counts below: the statements between take what they take)
SELECT now() AS items_at \gset
INSERT INTO items SELECT ulid_from_time(:'items_at'::timestamptz - g * interval '1 second'), g FROM generate_series(1, 20000) g;
CREATE INDEX items_hash ON items USING hash (id);
CREATE INDEX items_brin ON items USING brin (id);
ANALYZE items;
-- one row with a known ID to look up (generated IDs would make the plans differ each run)
INSERT INTO items VALUES ('01ARZ3NDEKTSV4RRFFQ69G5FAV', 0);
\set probe 01ARZ3NDEKTSV4RRFFQ69G5FAV
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM items WHERE id = :'probe';
SELECT n FROM items WHERE id = :'probe';
EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE id >= ulid_at(now() - interval '10 minutes');
SELECT count(*) FROM items WHERE id >= ulid_at(:'items_at'::timestamptz - interval '10 minutes 500 milliseconds');
DROP INDEX items_hash;
EXPLAIN (COSTS OFF) SELECT n FROM items WHERE id = :'probe';
SELECT n FROM items WHERE id = :'probe';
ALTER TABLE items DROP CONSTRAINT items_pkey;
RESET enable_bitmapscan;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE id >= ulid_at(now() - interval '10 minutes');
SELECT count(*) FROM items WHERE id >= ulid_at(:'items_at'::timestamptz - interval '10 minutes 500 milliseconds');
RESET enable_seqscan;

-- hash and merge joins (the row with n = 0 is in both tables)
CREATE TABLE items2 AS SELECT id, n FROM items WHERE n % 2 = 0;
ANALYZE items2;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items JOIN items2 USING (id);
SELECT count(*) FROM items JOIN items2 USING (id);
RESET enable_mergejoin;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM items JOIN items2 USING (id);
SELECT count(*) FROM items JOIN items2 USING (id);
RESET enable_hashjoin;
RESET enable_nestloop;
-- hashing agrees with equality, and the extended hash with its seed
SELECT count(DISTINCT ulid_hash(id)) > 19990 AS spread,
       bool_and(ulid_hash(id) = ulid_hash(id::text::ulid)) AS stable,
       bool_and(ulid_hash_extended(id, 0) & 4294967295 = ulid_hash(id)::bigint & 4294967295) AS seed0,
       count(DISTINCT ulid_hash_extended(id, 42)) > 19990 AS seeded
  FROM items;
SELECT count(*) AS groups FROM (SELECT id FROM items UNION SELECT id FROM items2) s;

-- a ulid beside a uuid (a driver's uuid parameter): each operator in both orders, the primary
-- key's index used, an untyped literal in the UUID form read as a ulid, IN and = ANY, joins
CREATE TABLE docs (id ulid PRIMARY KEY, n int);
INSERT INTO docs SELECT ulid_from_time(timestamptz '2024-05-06 07:08:09+00' + g * interval '1 ms'), g FROM generate_series(1, 5000) g;
INSERT INTO docs VALUES ('01a225ea-fd69-7423-27cb-a923811941ab'::uuid, 0), ('01a225ea-fd69-7423-27cb-a923811941ff'::uuid, -1);
ANALYZE docs;
SELECT a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge,
       b = a AS eq_r, b <> a AS ne_r, b < a AS lt_r, b <= a AS le_r, b > a AS gt_r, b >= a AS ge_r,
       sign(ulid_cmp(a, b)) AS cmp, sign(ulid_cmp(b, a)) AS cmp_r
  FROM (VALUES ('01a225ea-fd69-7423-27cb-a923811941ab'::ulid, '01a225ea-fd69-7423-27cb-a923811941ac'::uuid),
               ('01a225ea-fd69-7423-27cb-a923811941ab'::ulid, '01a225ea-fd69-7423-27cb-a923811941ab'::uuid),
               ('7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid, '00000000-0000-0000-0000-000000000000'::uuid)) v(a, b);
-- the comparison of every pair agrees with the comparison of the two as ulids
SELECT count(*) AS disagreements
  FROM (SELECT id AS a, lead(id) OVER (ORDER BY n % 7, n) AS b FROM docs) s
 WHERE (a = b::uuid) <> (a = b) OR (a < b::uuid) <> (a < b) OR (a::uuid > b) <> (a > b)
    OR (a <= b::uuid) <> (a <= b) OR (a::uuid >= b) <> (a >= b) OR (a <> b::uuid) <> (a <> b)
    OR sign(ulid_cmp(a, b::uuid)) <> sign(ulid_cmp(a, b)) OR sign(ulid_cmp(a::uuid, b)) <> sign(ulid_cmp(a, b));
SET enable_seqscan = off;
SET enable_bitmapscan = off;
PREPARE by_uuid(uuid) AS SELECT n FROM docs WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_uuid('01a225ea-fd69-7423-27cb-a923811941ab');
EXECUTE by_uuid('01a225ea-fd69-7423-27cb-a923811941ab');
PREPARE by_uuid_r(uuid) AS SELECT n FROM docs WHERE $1 = id;
EXPLAIN (COSTS OFF) EXECUTE by_uuid_r('01A225EA-FD69-7423-27CB-A923811941AB');
EXECUTE by_uuid_r('01A225EA-FD69-7423-27CB-A923811941AB');
PREPARE by_uuids(uuid[]) AS SELECT n FROM docs WHERE id = ANY($1) ORDER BY n;
EXPLAIN (COSTS OFF) EXECUTE by_uuids(ARRAY['01a225ea-fd69-7423-27cb-a923811941ab'::uuid, '01a225ea-fd69-7423-27cb-a923811941ff', '01a225ea-fd69-7423-27cb-a923811941ac']);
EXECUTE by_uuids(ARRAY['01a225ea-fd69-7423-27cb-a923811941ab'::uuid, '01a225ea-fd69-7423-27cb-a923811941ff', '01a225ea-fd69-7423-27cb-a923811941ac']);
PREPARE between_uuids(uuid, uuid) AS SELECT count(*) AS in_range FROM docs WHERE id >= $1 AND id < $2;
EXPLAIN (COSTS OFF) EXECUTE between_uuids(ulid_at('2024-05-06 07:08:10+00')::uuid, ulid_at('2024-05-06 07:08:11+00')::uuid);
EXECUTE between_uuids(ulid_at('2024-05-06 07:08:10+00')::uuid, ulid_at('2024-05-06 07:08:11+00')::uuid);
SELECT count(*) AS before_uuid FROM docs WHERE id < ulid_at('2024-05-06 07:08:10+00')::uuid;
SELECT count(*) AS above_uuid FROM docs WHERE ulid_at('2024-05-06 07:08:10+00')::uuid < id;
SELECT count(*) AS not_uuid FROM docs WHERE id <> '01a225ea-fd69-7423-27cb-a923811941ab'::uuid;
-- an untyped literal in the UUID form (what a driver sends as text), in = and IN
EXPLAIN (COSTS OFF) SELECT n FROM docs WHERE id = '01a225ea-fd69-7423-27cb-a923811941ab';
SELECT n FROM docs WHERE id = '01a225ea-fd69-7423-27cb-a923811941ab';
SELECT n FROM docs WHERE id IN ('01a225ea-fd69-7423-27cb-a923811941ab', '01A225EA-FD69-7423-27CB-A923811941AB');
SELECT '01a225ea-fd69-7423-27cb-a923811941ab'::ulid AS from_uuid_text,
       '01a225ea-fd69-7423-27cb-a923811941ab'::ulid = '01a225ea-fd69-7423-27cb-a923811941ab'::uuid::ulid AS same;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- joins of a uuid column with a ulid column: hash and merge
CREATE TABLE refs AS SELECT id::uuid AS doc, n FROM docs WHERE n % 10 = 0;
ANALYZE refs;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM refs r JOIN docs d ON d.id = r.doc;
SELECT count(*) FROM refs r JOIN docs d ON d.id = r.doc;
RESET enable_mergejoin;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM refs r JOIN docs d ON r.doc = d.id;
SELECT count(*) FROM refs r JOIN docs d ON r.doc = d.id;
RESET enable_hashjoin;
RESET enable_nestloop;
-- the operator families hold each pair of the two types (amvalidate reports none missing)
SELECT opf.opfname, amvalidate(opc.oid) AS valid
  FROM pg_opclass opc JOIN pg_opfamily opf ON opf.oid = opc.opcfamily
 WHERE opc.opcname IN ('ulid_ops', 'ulid_hash_ops') ORDER BY 1;
DROP TABLE docs, refs;

-- binary COPY out and in
\getenv abs_builddir PG_ABS_BUILDDIR
\set datafile :abs_builddir '/results/ulid.data'
COPY items TO :'datafile' (FORMAT binary);
CREATE TABLE items_copy (id ulid, n int);
COPY items_copy FROM :'datafile' (FORMAT binary);
SELECT count(*) AS copied_equal FROM items JOIN items_copy USING (id, n);
DROP TABLE items, items2, items_copy;

-- bad input: 22P02 naming the input, 22P03 for bytes, 22008 for times
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FA'::ulid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAVX'::ulid;
SELECT ''::ulid;
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAU'::ulid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAI'::ulid;
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAL'::ulid;
SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAO'::ulid;
SELECT '01ARZ3NDEKTSV4RRFFQ69G5-AV'::ulid;
-- a UUID's form with a character that is no hexadecimal digit, or without its hyphens
SELECT '01a225ea-fd69-7423-27cb-a923811941ag'::ulid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '01a225eafd69742327cba923811941ab'::ulid;
SELECT '81ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT '\x0102'::bytea::ulid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT ulid_at('1969-12-31 23:59:59.999+00');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT ulid_from_time(timestamptz 'infinity');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT ulid_from_time(NULL) IS NULL AS a, ulid_at(NULL) IS NULL AS b, ulid_timestamp(NULL) IS NULL AS c,
       NULL::ulid IS NULL AS d;
