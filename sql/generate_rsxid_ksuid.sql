-- rsxid() and ksuid(): one-second streams, one per shard. test/preload.conf sets
-- snowflake.shard_id = 5: every xid's machine id is the shard (3 bytes, big-endian), every
-- KSUID's payload begins with it (2 bytes); then a 24-bit counter, which starts at 0 in each
-- second; the xid's process id is the postmaster's (one value for the server), the KSUID's last
-- 11 bytes random. Values strictly increase in call order, and the time is the call's second.
SET timezone = 'UTC';
CREATE TEMP TABLE made AS
  SELECT n, clock_timestamp() AS before, rsxid() AS x, ksuid() AS k, clock_timestamp() AS after
    FROM generate_series(1, 10000) n;
SELECT count(*) AS made, count(DISTINCT x) AS distinct_rsxids, count(DISTINCT k) AS distinct_ksuids,
       bool_and(d.machine = '\x000005') AS machine_is_shard, count(DISTINCT d.pid) AS pids,
       bool_and(substr(e.payload, 1, 2) = '\x0005') AS payload_begins_with_shard,
       count(DISTINCT substr(e.payload, 6)) AS distinct_random_tails,
       bool_and(d.ts >= date_trunc('second', before) AND d.ts <= after + interval '1 second') AS rsxid_in_window,
       bool_and(e.ts >= date_trunc('second', before) AND e.ts <= after + interval '1 second') AS ksuid_in_window,
       bool_and(rsxid_timestamp(x) = d.ts AND ksuid_timestamp(k) = e.ts) AS same_ts
  FROM made, rsxid_decode(x) d, ksuid_decode(k) e;
-- the counter of a second counts from 0 with no gap (nothing else made rsxids or ksuids here)
SELECT count(*) FILTER (WHERE top <> c - 1) AS xid_seconds_with_gaps
  FROM (SELECT d.ts, count(*) AS c, max(d.counter) AS top FROM made, rsxid_decode(x) d GROUP BY d.ts) s;
SELECT count(*) FILTER (WHERE top <> c - 1) AS ksuid_seconds_with_gaps
  FROM (SELECT e.ts, count(*) AS c,
               max((get_byte(e.payload, 2) << 16) | (get_byte(e.payload, 3) << 8) | get_byte(e.payload, 4)) AS top
          FROM made, ksuid_decode(k) e GROUP BY e.ts) s;
SELECT count(*) FILTER (WHERE x <= px) AS rsxid_not_increasing,
       count(*) FILTER (WHERE k <= pk) AS ksuid_not_increasing,
       count(*) FILTER (WHERE x::text <= px::text COLLATE "C") AS rsxid_text_not_increasing
  FROM (SELECT x, k, lag(x) OVER (ORDER BY n) AS px, lag(k) OVER (ORDER BY n) AS pk FROM made) t
 WHERE px IS NOT NULL;
-- a column default: ids in insert order
CREATE TEMP TABLE events (x rsxid PRIMARY KEY DEFAULT rsxid(), k ksuid UNIQUE DEFAULT ksuid(), item text);
INSERT INTO events (item) SELECT 'item ' || n FROM generate_series(1, 100) n;
SELECT count(*) AS events,
       (SELECT array_agg(item ORDER BY x) FROM events)
         = (SELECT array_agg('item ' || n ORDER BY n) FROM generate_series(1, 100) n) AS rsxid_order_is_insert_order,
       (SELECT array_agg(item ORDER BY k) FROM events)
         = (SELECT array_agg('item ' || n ORDER BY n) FROM generate_series(1, 100) n) AS ksuid_order_is_insert_order
  FROM events;
-- a session's shard: snowflake.shard_id is the superuser's to set; each shard has its own
-- stream, so a change of shard does not end the second: a shard's values strictly increase,
-- also with another shard's in between, and values of different shards are ordered by their
-- second only (as bytes, the shard comes before the counter)
CREATE TEMP TABLE by_shard (n int, x rsxid, k ksuid);
INSERT INTO by_shard VALUES (1, rsxid(), ksuid());
SET snowflake.shard_id = 300;
INSERT INTO by_shard VALUES (2, rsxid(), ksuid());
SELECT (rsxid_decode(x)).machine AS machine_300, substr((ksuid_decode(k)).payload, 1, 2) AS payload_300
  FROM by_shard WHERE n = 2;
RESET snowflake.shard_id;
INSERT INTO by_shard VALUES (3, rsxid(), ksuid());
SELECT bool_and(x > px AND k > pk) AS each_shard_increasing
  FROM (SELECT x, k, lag(x) OVER w AS px, lag(k) OVER w AS pk FROM by_shard
        WINDOW w AS (PARTITION BY (rsxid_decode(x)).machine ORDER BY n)) s
 WHERE px IS NOT NULL;
SELECT bool_and(rsxid_timestamp(x) >= rsxid_timestamp(px)
                AND ksuid_timestamp(k) >= ksuid_timestamp(pk)) AS seconds_in_call_order
  FROM (SELECT x, k, lag(x) OVER w AS px, lag(k) OVER w AS pk FROM by_shard WINDOW w AS (ORDER BY n)) s
 WHERE px IS NOT NULL;
-- each shard's stream has its row in snowflake_streams(), with its shard, its last second and
-- counter, and a lead of under a second past the clock's second
SELECT kind, shard, last_seq >= 0 AS counter,
       date_trunc('second', last_ts) = last_ts AS on_a_second, lead_ms < 2000 AS lead_bounded,
       blocks IS NULL AS no_blocks
  FROM snowflake_streams() WHERE kind IN ('rsxid', 'ksuid') ORDER BY kind, shard;
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict, p.prorettype::regtype
  FROM pg_proc p WHERE p.oid IN ('rsxid()'::regprocedure, 'ksuid()'::regprocedure) ORDER BY p.proname DESC;
-- a text literal is a cast, not a call of the generator
SELECT rsxid('9m4e2mr0ui3e8a215n4g') AS xid_cast, ksuid('0ujtsYcgvSTl8PAuAdqWYSMnLOv') AS ksuid_cast;
SELECT rsxid('9m4e2mr0ui3e8a215n4') AS short_xid;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
-- a shard outside 0 to 8191 cannot be set, so no value carries one
SET snowflake.shard_id = 8192;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT (rsxid_decode(rsxid())).machine AS machine_still_5;
