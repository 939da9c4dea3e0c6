-- snowflake_block(n): the next n IDs of this server's stream in one call; snowflake_block_ids()
-- expands a block; the status counts blocks.
SET timezone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set outcome_sql :abs_srcdir '/sql/include/outcome.sql'
\i :outcome_sql

SELECT coalesce(sum(blocks), 0) AS blocks0, coalesce(sum(block_ids), 0) AS block_ids0
  FROM snowflake_status() \gset

-- one ID; then a block between two snowflake() calls: every ID of it lies between them
SELECT count, first = last AS one_id, snowflake_shard(first) AS shard FROM snowflake_block(1);
SELECT snowflake() AS before \gset
SELECT first, last, count FROM snowflake_block(3000) \gset
SELECT snowflake() AS after \gset
SELECT :count AS count, :first > :before AS above_before, :after > :last AS below_after,
       snowflake_shard(:first) AS first_shard, snowflake_shard(:last) AS last_shard;

-- the block is every ID of its shard from first to last: within a millisecond the next
-- sequence, then sequence 0 of the next millisecond
CREATE TEMP TABLE ids AS SELECT row_number() OVER () AS n, id FROM snowflake_block_ids(:first, :last) AS id;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids, min(id) = :first AS starts_at_first,
       max(id) = :last AS ends_at_last, bool_and(snowflake_shard(id) = 5) AS shard_5
  FROM ids;
SELECT count(*) AS not_the_next_id
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
 WHERE prev IS NOT NULL
   AND id <> CASE WHEN snowflake_seq(prev) < 1023 THEN prev + 1
                  ELSE ((prev >> 23) + 1) << 23 | (prev & (8191::bigint << 10)) END;
SELECT count(DISTINCT snowflake_timestamp(id)) >= 3 AS spans_milliseconds FROM ids;

-- a block of any size from a table of blocks: 0 duplicates beside snowflake() DEFAULT rows
CREATE TEMP TABLE t (id bigint PRIMARY KEY DEFAULT snowflake(), src text);
INSERT INTO t (src) SELECT 'default' FROM generate_series(1, 500);
INSERT INTO t SELECT snowflake_block_ids(b.first, b.last), 'block'
  FROM generate_series(1, 20) g, LATERAL snowflake_block(g * 97) b;
INSERT INTO t (src) SELECT 'default' FROM generate_series(1, 500);
SELECT src, count(*) FROM t GROUP BY src ORDER BY src;

-- sizes outside 1 to 1048576, and NULL
SELECT n, pg_temp.outcome(format('SELECT count FROM snowflake_block(%s)', n)) AS outcome
  FROM (VALUES ('0'), ('-1'), ('1048577'), ('2147483647')) AS v(n);
SELECT count(*) AS rows, bool_and(first IS NULL AND count IS NULL) AS nulls_for_null
  FROM snowflake_block(NULL);

-- pairs that are not a block's shape
SELECT pair, pg_temp.outcome('SELECT count(*) FROM snowflake_block_ids(' || args || ')') AS outcome
  FROM (VALUES
  ('two shards', 'snowflake(1), snowflake(2)'),
  ('last below first', (:last)::text || ', ' || (:first)::text),
  ('1,048,577 IDs', 'snowflake_at(''2026-01-01+00''), snowflake_at(''2026-01-01 00:00:01.025+00'')'),
  ('1,048,576 IDs', 'snowflake_at(''2026-01-01+00''), snowflake_at(''2026-01-01 00:00:01.024+00'') - 8388608 + 1023'),
  ('negative', '-1, 5'),
  ('one ID', '5, 5'),
  ('NULL', 'NULL, 5')) AS c(pair, args);

-- up to 1,024 IDs, a block is n consecutive integers: every n from 1 to 1,024
SELECT count(*) AS blocks, count(*) FILTER (WHERE b.last = b.first + n - 1 AND b.count = n) AS consecutive
  FROM generate_series(1, 1024) n, LATERAL snowflake_block(n) b;

-- snowflake_block_first(n): a block of n (1 to 1,024) consecutive IDs as its first, between
-- the IDs taken before and after it; sizes outside 1 to 1,024 are refused, NULL gives NULL
SELECT snowflake() AS before \gset
CREATE TEMP TABLE firsts AS
  SELECT g, n, snowflake_block_first(n) AS first FROM unnest('{1,2,1000,1023,1024}'::int[]) WITH ORDINALITY AS u(n, g);
SELECT snowflake() AS after \gset
SELECT count(*) AS blocks, bool_and(first > :before AND first + n - 1 < :after) AS between_before_and_after,
       bool_and(snowflake_shard(first) = 5 AND snowflake_shard(first + n - 1) = 5) AS shard_5,
       count(*) FILTER (WHERE first <= prev_last) AS overlapping
  FROM (SELECT *, lag(first + n - 1) OVER (ORDER BY g) AS prev_last FROM firsts) s;
SELECT n, pg_temp.outcome(format('SELECT snowflake_block_first(%s)', n)) AS outcome
  FROM (VALUES ('0'), ('1025'), ('-1')) AS v(n);
SELECT snowflake_block_first(NULL) IS NULL AS null_for_null;

-- the array form: the IDs of its block, in order; an array of 0 is refused like a block of 0
SELECT array_length(a, 1) AS n, a = ARRAY(SELECT snowflake_block_ids(a[1], a[3000])) AS its_block
  FROM snowflake_block_array(3000) a;
SELECT pg_temp.outcome('SELECT snowflake_block_array(0)') AS array_of_0;

-- the lead a block may take: snowflake.block_max_lead (100 ms by default), which only a
-- superuser (or a role granted SET on it) changes; an ordinary role gets at most 102,401 IDs
CREATE ROLE block_taker;
SET ROLE block_taker;
SELECT current_setting('snowflake.block_max_lead') AS block_max_lead;
SELECT pg_temp.outcome('SET snowflake.block_max_lead = ''1s''') AS raise_it;
SELECT n, pg_temp.outcome(format('SELECT count FROM snowflake_block(%s)', n)) AS outcome
  FROM (VALUES (102401), (102402), (1048576)) AS v(n);
RESET ROLE;
DROP ROLE block_taker;

-- a block of one needs no lead at all, as one snowflake() does
SET snowflake.block_max_lead = 0;
SELECT count FROM snowflake_block(1);
SELECT pg_temp.outcome('SELECT count FROM snowflake_block(2)') AS two_ids;

-- the largest block, 1,048,576 IDs (1,024 ms of one shard), for a trusted role
SET snowflake.block_max_lead = '1024ms';
SELECT count, snowflake_shard(first) = snowflake_shard(last) AS one_shard,
       ((last >> 23) - (first >> 23)) BETWEEN 1023 AND 1024 AS spans_1024_ms
  FROM snowflake_block(1048576) \gset big_
SELECT :big_count AS count, :'big_one_shard' AS one_shard, :'big_spans_1024_ms' AS spans_1024_ms;
RESET snowflake.block_max_lead;

-- snowflake_status() counts the blocks and their IDs; snowflake_streams() per shard
SELECT blocks - :blocks0 AS blocks, block_ids - :block_ids0 AS block_ids FROM snowflake_status();
SELECT shard, blocks >= 23 AS counted, block_ids >= 1048576 + 3001 AS ids_counted
  FROM snowflake_streams() WHERE kind = 'snowflake' AND shard = 5;
SELECT snowflake_uuidv7() IS NOT NULL AS uuidv7, ulid() IS NOT NULL AS ulid;
SELECT kind, blocks, block_ids FROM snowflake_streams() WHERE kind <> 'snowflake' ORDER BY kind;

-- the tests after this one see shard 5 back at the clock: wait (bounded) until the clock has
-- passed the largest block's last millisecond (at a lead of 0 that millisecond may be full, and
-- the no-wait form below would rightly find nothing in it)
DO $$
BEGIN
  FOR i IN 1..3000 LOOP
    EXIT WHEN (SELECT max(lead_ms) FROM snowflake_streams() WHERE kind = 'snowflake') < -1;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SELECT max(lead_ms) < -1 AS back_at_the_clock FROM snowflake_streams() WHERE kind = 'snowflake';

-- the no-wait form: what the stream holds now, count 0 to n, never waiting; at a lead bound of
-- 0 ms, at most what is left of the clock's millisecond
SET snowflake.block_max_lead = 0;
SELECT count BETWEEN 1 AND 1024 AS some, last - first + 1 = count AS consecutive
  FROM snowflake_block(5000, wait => false);
-- (20,000 blocks of 7 would run 137 ms ahead if the bound were not kept; the IDs' clock may
-- lead the system clock a little, as arm64's counter does)
SELECT count(*) FILTER (WHERE count = 0) + count(*) FILTER (WHERE count BETWEEN 1 AND 7) AS all_0_to_7,
       max(lead) < interval '50 ms' AS not_ahead
  FROM (SELECT (b).count, snowflake_timestamp((b).last) - clock_timestamp() AS lead
          FROM (SELECT snowflake_block(7, wait => false) AS b FROM generate_series(1, 20000)) s) t;
SELECT cardinality(snowflake_block_array(5000, wait => false)) <= 1024 AS array_now;
RESET snowflake.block_max_lead;
