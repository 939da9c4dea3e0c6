-- Other systems' IDs: each layout against an example published with its time (the sources
-- are cited in test/unit/foreign_test.cpp), its edges, and a time range scan over a table of
-- such IDs. Every function here is IMMUTABLE.
SET timezone = 'UTC';

-- published examples: time, node (shard), sequence
SELECT layout, id, d.*
  FROM (VALUES ('twitter', 1541815603606036480),  -- Wikipedia, "Snowflake ID"
               ('discord', 175928847299117063),   -- Discord's developer documentation
               ('pgedge', 136169504773242881),    -- pgEdge snowflake's documentation, made by 1.1:
               ('pgedge_1_1', 136169504773242881),  -- node 1, count 0 as that layout
               ('instagram', (1387263000::bigint << 23) | (1341 << 10) | 905),  -- Instagram's blog
               ('sonyflake', (((extract(epoch FROM timestamptz '2024-02-29 12:34:56.78+00') * 1000)::bigint
                              - 1409529600000) / 10) << 24 | (17 << 16) | 48879)) AS v(layout, id),
       snowflake_decode(id, layout) d;

-- a layout's bound at an ID's own time is the first ID of its unit, at or below it; the next
-- unit's bound is above it
SELECT layout, snowflake_at((snowflake_decode(id, layout)).ts, layout) <= id AS bound_below,
       snowflake_at((snowflake_decode(id, layout)).ts + interval '10 ms', layout) > id AS next_above,
       (snowflake_decode(snowflake_at((snowflake_decode(id, layout)).ts, layout), layout)).ts
         = (snowflake_decode(id, layout)).ts AS same_unit
  FROM (VALUES ('twitter', 1541815603606036480), ('discord', 175928847299117063),
               ('pgedge', 136169504773242881), ('pgedge_1_1', 136169504773242881),
               ('instagram', (1387263000::bigint << 23) | (1341 << 10) | 905),
               ('sonyflake', 1000000000000000000)) AS v(layout, id);

-- edges of every layout: zero is its epoch, the largest bigint its last unit; any case
SELECT layout, (snowflake_decode(0, layout)).ts AS zero, d.*
  FROM unnest(ARRAY['twitter', 'DISCORD', 'Sonyflake', 'pgedge', 'PGEDGE_1_1', 'instagram']) AS layout,
       snowflake_decode(9223372036854775807, layout) d;
SELECT layout, snowflake_at(ts, layout) AS first_id
  FROM (VALUES ('twitter', timestamptz '2010-11-04 01:42:54.657+00'),
               ('discord', '2015-01-01 00:00:00+00'), ('sonyflake', '2014-09-01 00:00:00.009+00'),
               ('pgedge', '2023-01-01 00:00:00+00'), ('pgedge_1_1', '2023-01-01 00:00:00.001+00'),
               ('instagram', '2011-08-24 21:07:01.721+00'))
       AS v(layout, ts);

-- each layout's own fields. Twitter's and Discord's are the two 5-bit halves of the shard
-- snowflake_decode gives: Twitter's machine 378 is datacenter 11, worker 26; Discord's 32 is
-- worker 1, process 0.
SELECT * FROM twitter_decode(1541815603606036480);
SELECT * FROM discord_decode(175928847299117063);
SELECT * FROM sonyflake_decode((((extract(epoch FROM timestamptz '2024-02-29 12:34:56.78+00') * 1000)::bigint
                                - 1409529600000) / 10) << 24 | (17 << 16) | 48879);
-- pgEdge's documented example was made by 1.1: node 1, count 0 as pgedge_1_1; read as 1.2
-- (the default), the same bits are node 0, count 1
SELECT * FROM pgedge_decode(136169504773242881, 'pgedge_1_1');
SELECT * FROM pgedge_decode(136169504773242881);
SELECT * FROM pgedge_decode(136169504773242881, layout => 'PGEDGE');
-- MongoDB's manual's ObjectId, as text and as bytes; Segment's two KSUIDs
SELECT * FROM objectid_decode('507f191e810c19729de860ea');
SELECT * FROM objectid_decode('\x507f191e810c19729de860ea'::bytea);
SELECT * FROM ksuid_decode('0ujtsYcgvSTl8PAuAdqWYSMnLOv');
SELECT * FROM ksuid_decode('0ujzPyRiIAffKhBux4PvQdDqMHY');
-- what the parts are: the time and the bytes around them give back the ID
SELECT encode(int4send(extract(epoch FROM ts)::int) || random || substr(int4send(counter), 2), 'hex') AS objectid
  FROM objectid_decode('507f191e810c19729de860ea');
SELECT encode(int4send((extract(epoch FROM ts) - 1400000000)::int) || payload, 'hex') AS ksuid_raw
  FROM ksuid_decode('0ujtsYcgvSTl8PAuAdqWYSMnLOv');

-- every decoder agrees with snowflake_decode on 2,000 IDs spread over the positive bigints
WITH ids AS (SELECT g * 4611686018427387 + g * g * 7919 AS id FROM generate_series(0::bigint, 1999) g)
SELECT 'twitter' AS layout, count(*) AS ids,
       count(*) FILTER (WHERE (t.ts, t.datacenter * 32 + t.worker, t.seq) = (s.ts, s.shard, s.seq)) AS agree
  FROM ids, twitter_decode(id) t, snowflake_decode(id, 'twitter') s
UNION ALL
SELECT 'discord', count(*),
       count(*) FILTER (WHERE (d.ts, d.worker * 32 + d.process, d.increment) = (s.ts, s.shard, s.seq))
  FROM ids, discord_decode(id) d, snowflake_decode(id, 'discord') s
UNION ALL
SELECT 'sonyflake', count(*), count(*) FILTER (WHERE (y.ts, y.machine, y.seq) = (s.ts, s.shard, s.seq))
  FROM ids, sonyflake_decode(id) y, snowflake_decode(id, 'sonyflake') s
UNION ALL
SELECT l, count(*), count(*) FILTER (WHERE (p.ts, p.node, p.count) = (s.ts, s.shard, s.seq))
  FROM ids, unnest(ARRAY['pgedge', 'pgedge_1_1']) l, pgedge_decode(id, l) p, snowflake_decode(id, l) s
 GROUP BY l;
-- and the parts sit where each system puts them: Twitter's datacenter at bit 17, worker at
-- 12; Discord's worker at 17, process at 12; pgEdge 1.1's count at bit 10, 1.2's at 0
SELECT (twitter_decode(31::bigint << 17)).datacenter, (twitter_decode(31::bigint << 17)).worker,
       (twitter_decode(31::bigint << 12)).worker AS worker_at_12,
       (discord_decode(5::bigint << 17)).worker AS discord_worker,
       (discord_decode(5::bigint << 12)).process AS discord_process,
       (pgedge_decode(4095::bigint << 10, 'pgedge_1_1')).count AS count_1_1,
       (pgedge_decode(4095, 'pgedge')).count AS count_1_2;

\getenv abs_srcdir PG_ABS_SRCDIR
\set outcome_sql :abs_srcdir '/sql/include/outcome.sql'
\i :outcome_sql

SELECT call, pg_temp.outcome('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  ('snowflake_decode(-1, ''twitter'')'),
  ('snowflake_decode(1, ''snowflake'')'),
  ('snowflake_decode(1, '''')'),
  ('snowflake_decode(NULL, ''twitter'')'),
  ('snowflake_decode(1, NULL)'),
  ('snowflake_at(''2010-11-04 01:42:54.656+00'', ''twitter'')'),
  ('snowflake_at(''2080-07-10 17:30:30.208+00'', ''twitter'')'),
  ('snowflake_at(''2080-07-10 17:30:30.209+00'', ''twitter'')'),
  ('snowflake_at(''2014-08-31 23:59:59.999+00'', ''sonyflake'')'),
  ('snowflake_at(''infinity'', ''discord'')'),
  ('snowflake_at(now(), ''mastodon'')'),
  ('objectid_timestamp(''507f191e810c19729de860ea'')'),
  ('objectid_timestamp(''507F191E810C19729DE860EA'')'),
  ('objectid_timestamp(''\x507f191e810c19729de860ea''::bytea)'),
  ('objectid_timestamp(''000000000000000000000000'')'),
  ('objectid_timestamp(''ffffffff0000000000000000'')'),
  ('objectid_timestamp(''507f191e810c19729de860e'')'),
  ('objectid_timestamp(''507f191e810c19729de860eg'')'),
  ('objectid_timestamp(''\x507f191e''::bytea)'),
  ('ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLOv'')'),
  ('ksuid_timestamp(''000000000000000000000000000'')'),
  ('ksuid_timestamp(''aWgEPTl1tmebfsQzFP4bxwgy80V'')'),
  ('ksuid_timestamp(''aWgEPTl1tmebfsQzFP4bxwgy80W'')'),
  ('ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLO'')'),
  ('ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLO_'')'),
  ('snowflake_decode(136169504773242881, ''pgedge_1_1'')'),
  ('snowflake_at(''2024-01-11 18:08:59.845+00'', ''pgedge_1_1'')'),
  ('snowflake_at(''2022-12-31 23:59:59.999+00'', ''pgedge_1_1'')'),
  ('snowflake_decode(1, ''pgedge_1_2'')'),
  ('twitter_decode(0)'),
  ('twitter_decode(9223372036854775807)'),
  ('twitter_decode(-1)'),
  ('twitter_decode(NULL)'),
  ('discord_decode(-9223372036854775808)'),
  ('discord_decode(9223372036854775807)'),
  ('sonyflake_decode(-1)'),
  ('sonyflake_decode(9223372036854775807)'),
  ('pgedge_decode(-1)'),
  ('pgedge_decode(-1, ''pgedge_1_1'')'),
  ('pgedge_decode(9223372036854775807, ''pgedge_1_1'')'),
  ('pgedge_decode(1, ''twitter'')'),
  ('pgedge_decode(1, ''pgedge_1_0'')'),
  ('pgedge_decode(1, NULL)'),
  ('objectid_decode(''000000000000000000000000'')'),
  ('objectid_decode(''ffffffffffffffffffffffff'')'),
  ('objectid_decode(''507f191e810c19729de860e'')'),
  ('objectid_decode(''507f191e810c19729de860eg'')'),
  ('objectid_decode(''\x507f191e''::bytea)'),
  ('objectid_decode(NULL::bytea)'),
  ('ksuid_decode(''000000000000000000000000000'')'),
  ('ksuid_decode(''aWgEPTl1tmebfsQzFP4bxwgy80V'')'),
  ('ksuid_decode(''aWgEPTl1tmebfsQzFP4bxwgy80W'')'),
  ('ksuid_decode(''0ujtsYcgvSTl8PAuAdqWYSMnLO'')'),
  ('ksuid_decode(NULL)')
) AS c(call);

-- IMMUTABLE, so usable in indexes and partition bounds
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proisstrict AS strict,
       p.proparallel AS parallel
  FROM pg_proc p
 WHERE p.proname IN ('objectid_timestamp', 'ksuid_timestamp', 'twitter_decode', 'discord_decode',
                     'sonyflake_decode', 'pgedge_decode', 'objectid_decode', 'ksuid_decode')
    OR (p.proname IN ('snowflake_decode', 'snowflake_at') AND p.pronargs = 2
        AND p.proargtypes[1] = 'text'::regtype)
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- a table of Discord message IDs, range-scanned by time through its primary key
CREATE TABLE discord_messages (id bigint PRIMARY KEY, body text);
INSERT INTO discord_messages
SELECT snowflake_at(timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute', 'discord')
       | ((g % 1024) << 12) | (g % 4096), 'message ' || g
  FROM generate_series(0, 9999) g;
ANALYZE discord_messages;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM discord_messages
 WHERE id >= snowflake_at('2024-01-07 00:00:00+00', 'discord')
   AND id < snowflake_at('2024-01-07 01:00:00+00', 'discord');
RESET enable_seqscan;
SELECT count(*) AS in_that_hour,
       min((snowflake_decode(id, 'discord')).ts), max((discord_decode(id)).ts)
  FROM discord_messages
 WHERE id >= snowflake_at('2024-01-07 00:00:00+00', 'discord')
   AND id < snowflake_at('2024-01-07 01:00:00+00', 'discord');
-- and an expression index over the decoded time
CREATE INDEX discord_messages_ts ON discord_messages (((snowflake_decode(id, 'discord')).ts));
DROP TABLE discord_messages;
