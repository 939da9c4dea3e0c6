-- Decoding and time bounds: the layout is Instagram's (time << 23 | shard << 10 | seq) with
-- the default epoch 2020-01-01 00:00:00 UTC.
SET timezone = 'UTC';

SELECT * FROM snowflake_decode(0);
SELECT * FROM snowflake_decode((1::bigint << 23) | (2 << 10) | 3);
-- the largest ID: the last millisecond of the 41-bit field whose top bit is the sign bit
SELECT * FROM snowflake_decode(9223372036854775807);
SELECT snowflake_timestamp(9223372036854775807), snowflake_shard(9223372036854775807),
       snowflake_seq(9223372036854775807);

-- one known ID, composed by hand
SELECT ((extract(epoch FROM timestamptz '2024-05-06 07:08:09.123+00') * 1000)::bigint
        - 1577836800000) << 23 | (4321 << 10) | 987 AS id \gset
SELECT :id AS id, (snowflake_decode(:id)).*;

-- round trip: generate, decode, and rebuild from the parts
SELECT count(*) AS rebuilt_equal
  FROM (SELECT snowflake(g % 8192) AS id FROM generate_series(1, 5000) g) s,
       snowflake_decode(s.id) d
 WHERE snowflake_at(d.ts) | (d.shard::bigint << 10) | d.seq = s.id;

-- snowflake_at: the smallest ID of a millisecond
SELECT snowflake_at('2020-01-01 00:00:00+00') AS at_epoch;
SELECT snowflake_at('2024-05-06 07:08:09.123+00') = (:id & ~((1::bigint << 23) - 1)) AS smallest_of_ms;
-- a timestamp inside a millisecond maps to the start of that millisecond
SELECT snowflake_at('2024-05-06 07:08:09.1239+00') = snowflake_at('2024-05-06 07:08:09.123+00') AS floor_ms;
SELECT snowflake_at('2024-05-06 07:08:09.124+00') - snowflake_at('2024-05-06 07:08:09.123+00')
       = (1::bigint << 23) AS next_ms;
SELECT snowflake_timestamp(snowflake_at('2054-11-03 19:53:47.775+00')) AS last_ms;

-- bounds hold for generated IDs: snowflake_at(t) <= id < snowflake_at(t + 1 ms)
SELECT snowflake() AS fresh \gset
SELECT snowflake_at(snowflake_timestamp(:fresh)) <= :fresh AS lower,
       snowflake_at(snowflake_timestamp(:fresh) + interval '1 millisecond') > :fresh AS upper;

-- "rows since yesterday" is a range scan of the primary key: a week of rows, one a minute
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake(), payload int);
INSERT INTO events (id, payload)
  SELECT snowflake_at(now() - g * interval '1 minute') | (3 << 10), g FROM generate_series(1, 10080) g;
ANALYZE events;
EXPLAIN (COSTS OFF)
  SELECT count(*) FROM events WHERE id >= snowflake_at(now() - interval '1 day');
EXPLAIN (COSTS OFF)
  SELECT * FROM events WHERE id >= snowflake_at('2024-01-01') AND id < snowflake_at('2024-01-02');
-- (30 s of slack keep the boundary row out of reach of the time between the statements)
SELECT count(*) AS last_day FROM events WHERE id >= snowflake_at(now() - interval '1 day 30 seconds');
SELECT count(*) AS earlier FROM events WHERE id < snowflake_at(now() - interval '1 day 30 seconds');
DROP TABLE events;

-- The server refuses an index on the form that reads snowflake.epoch (STABLE) before any of
-- the extension's code runs; its error carries a hint naming the IMMUTABLE form, which works.
CREATE TABLE decode_index (id bigint);
CREATE INDEX ON decode_index (snowflake_timestamp(id));
CREATE TABLE decode_by_time (id bigint) PARTITION BY RANGE (snowflake_timestamp(id));
CREATE INDEX ON decode_index (snowflake_timestamp(id, epoch => timestamptz '2020-01-01 00:00:00+00'));
DROP TABLE decode_index;
