-- snowflake(): shard from the setting, explicit shard, order, time, and use as a DEFAULT.

-- test/preload.conf sets snowflake.shard_id = 5 for the whole server
SHOW snowflake.shard_id;
SELECT snowflake_shard(snowflake()) AS shard;
SELECT snowflake_shard(snowflake(0)) AS s0, snowflake_shard(snowflake(8191)) AS s8191;

-- a superuser can set the shard per session (and per database or role)
SET snowflake.shard_id = 77;
SELECT snowflake_shard(snowflake()) AS shard;
RESET snowflake.shard_id;

-- IDs of one shard are strictly increasing in issue order, and unique
SELECT clock_timestamp() AS made_from \gset
CREATE TEMP TABLE ids AS
  SELECT n, snowflake() AS id FROM generate_series(1, 20000) AS n;
SELECT extract(epoch FROM clock_timestamp() - :'made_from'::timestamptz) * 1000 AS made_ms \gset
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids FROM ids;
SELECT count(*) AS out_of_order
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s WHERE id <= prev;
-- 20000 IDs need at least 20 milliseconds of sequence space. In each millisecond the
-- sequence counts up from 0 with no gap (the first one may have begun before), and it carries
-- into the next millisecond after 1023: IDs made in less than 15 ms (at most 16 milliseconds
-- of the clock) must have carried, and used every sequence 0..1023. (A slower server, such as
-- arm64 under emulation, makes fewer a millisecond; the core's unit tests check the carry
-- with a clock that stands still.)
SELECT count(*) >= 20 AS spans_ms,
       bool_and(ids = max_seq - min_seq + 1 AND (min_seq = 0 OR ms = first_ms)) AS gapless,
       max(max_seq) = 1023 OR :made_ms >= 15 AS full_ms_carry
  FROM (SELECT snowflake_timestamp(id) AS ms, count(*) AS ids,
               min(snowflake_seq(id)) AS min_seq, max(snowflake_seq(id)) AS max_seq
          FROM ids GROUP BY 1) per_ms,
       (SELECT min(snowflake_timestamp(id)) AS first_ms FROM ids) f;

-- an ID's time is the clock's time (to the millisecond, within the lead)
SELECT clock_timestamp() AS before \gset
SELECT snowflake() AS id \gset
SELECT clock_timestamp() AS after \gset
SELECT snowflake_timestamp(:id) >= date_trunc('milliseconds', :'before'::timestamptz) AS not_early,
       snowflake_timestamp(:id) <= :'after'::timestamptz + interval '1 second' AS not_late;

-- explicit shards keep separate sequences in shared memory
SELECT snowflake_shard(a) AS a_shard, snowflake_shard(b) AS b_shard, a <> b AS differ
  FROM (SELECT snowflake(100) AS a, snowflake(101) AS b) s;

-- as a column DEFAULT
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake(), item text);
INSERT INTO orders (item) SELECT 'item ' || g FROM generate_series(1, 1000) g;
SELECT count(*), count(DISTINCT id), bool_and(snowflake_shard(id) = 5) AS shard_5 FROM orders;
-- insertion order is ID order
SELECT bool_and(id > prev) AS ordered
  FROM (SELECT id, lag(id) OVER (ORDER BY ctid) AS prev FROM orders) s WHERE prev IS NOT NULL;

-- volatile: a new ID for every row, also inside one statement
SELECT count(DISTINCT snowflake()) FROM generate_series(1, 3);

-- the functions are declared as the docs say
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.provolatile,
       p.proparallel, p.proisstrict, p.prosecdef
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname LIKE 'snowflake%'
  ORDER BY 1, 2;

DROP TABLE orders;
