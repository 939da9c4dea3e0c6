-- Other systems' IDs: each layout against an example published with its time (the sources
-- are cited in test/unit/foreign_test.cpp), its edges, and a time range scan over a table of
-- such IDs. Every function here is IMMUTABLE.
SET timezone = 'UTC';

-- published examples: time, node (shard), sequence
SELECT layout, id, d.*
  FROM (VALUES ('twitter', 1541815603606036480),  -- Wikipedia, "Snowflake ID"
               ('discord', 175928847299117063),   -- Discord's developer documentation
               ('pgedge', 136169504773242881),    -- pgEdge snowflake's documentation
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
               ('pgedge', 136169504773242881), ('instagram', (1387263000::bigint << 23) | (1341 << 10) | 905),
               ('sonyflake', 1000000000000000000)) AS v(layout, id);

-- edges of every layout: zero is its epoch, the largest bigint its last unit; any case
SELECT layout, (snowflake_decode(0, layout)).ts AS zero, d.*
  FROM unnest(ARRAY['twitter', 'DISCORD', 'Sonyflake', 'pgedge', 'instagram']) AS layout,
       snowflake_decode(9223372036854775807, layout) d;
SELECT layout, snowflake_at(ts, layout) AS first_id
  FROM (VALUES ('twitter', timestamptz '2010-11-04 01:42:54.657+00'),
               ('discord', '2015-01-01 00:00:00+00'), ('sonyflake', '2014-09-01 00:00:00.009+00'),
               ('pgedge', '2023-01-01 00:00:00+00'), ('instagram', '2011-08-24 21:07:01.721+00'))
       AS v(layout, ts);

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
  ('ksuid_timestamp(''0ujtsYcgvSTl8PAuAdqWYSMnLO_'')')
) AS c(call);

-- IMMUTABLE, so usable in indexes and partition bounds
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility
  FROM pg_proc p
 WHERE p.proname IN ('objectid_timestamp', 'ksuid_timestamp')
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
       min((snowflake_decode(id, 'discord')).ts), max((snowflake_decode(id, 'discord')).ts)
  FROM discord_messages
 WHERE id >= snowflake_at('2024-01-07 00:00:00+00', 'discord')
   AND id < snowflake_at('2024-01-07 01:00:00+00', 'discord');
-- and an expression index over the decoded time
CREATE INDEX discord_messages_ts ON discord_messages (((snowflake_decode(id, 'discord')).ts));
DROP TABLE discord_messages;
