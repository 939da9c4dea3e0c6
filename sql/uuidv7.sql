-- snowflake_uuidv7(): RFC 9562 version 7, monotonic across the server, with decode and bounds.
SET timezone = 'UTC';

-- the version and variant bits
SELECT substr(u::text, 15, 1) AS version_digit, substr(u::text, 20, 1) IN ('8', '9', 'a', 'b') AS variant_10
  FROM (SELECT snowflake_uuidv7() AS u) s;

-- RFC 9562 appendix A.6's example: Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00
SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F');
-- not a version 7: NULL
SELECT uuidv7_timestamp(gen_random_uuid()) IS NULL AS v4_is_null;
-- version 7's digit under another variant than RFC 9562's (110x, Microsoft's): NULL too
SELECT uuidv7_timestamp('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f') IS NULL AS other_variant_is_null;

-- the time is the clock's
SELECT clock_timestamp() AS before \gset
SELECT snowflake_uuidv7() AS u \gset
SELECT uuidv7_timestamp(:'u') >= date_trunc('milliseconds', :'before'::timestamptz) AS not_early,
       uuidv7_timestamp(:'u') <= clock_timestamp() + interval '1 second' AS not_late;

-- strictly increasing in issue order, and unique
CREATE TEMP TABLE v7 AS SELECT n, snowflake_uuidv7() AS u FROM generate_series(1, 100000) n;
SELECT count(DISTINCT u) AS distinct_values,
       count(*) FILTER (WHERE u <= prev) AS out_of_order
  FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM v7) s;
-- the random part (rand_b, 62 bits) differs between values of one millisecond
SELECT count(DISTINCT substr(u::text, 20)) = count(*) AS rand_b_distinct FROM v7;

-- uuidv7_from_time(ts): a version 7 at that millisecond, random otherwise
SELECT uuidv7_timestamp(uuidv7_from_time('2024-05-06 07:08:09.123456+00')) AS ts,
       substr(uuidv7_from_time('2024-05-06 07:08:09+00')::text, 15, 1) AS version,
       uuidv7_from_time('2024-05-06 07:08:09+00') <> uuidv7_from_time('2024-05-06 07:08:09+00') AS random;

-- snowflake_uuidv7(shift): like core's uuidv7(interval), the time shifted by an interval
SELECT uuidv7_timestamp(snowflake_uuidv7('-1 day')) BETWEEN clock_timestamp() - interval '1 day 1 second'
                                                        AND clock_timestamp() - interval '1 day' AS a_day_back,
       uuidv7_timestamp(snowflake_uuidv7(interval '1 hour')) > clock_timestamp() + interval '59 minutes' AS an_hour_ahead,
       substr(snowflake_uuidv7('0')::text, 15, 1) AS version,
       snowflake_uuidv7('1 second') <> snowflake_uuidv7('1 second') AS random;
-- a value shifted ahead leaves the server-wide sequence where it was
SELECT snowflake_uuidv7(interval '1 year') > snowflake_uuidv7() AS ahead,
       uuidv7_timestamp(snowflake_uuidv7()) < clock_timestamp() + interval '1 second' AS sequence_unmoved;

-- uuidv7_at(ts): the smallest version 7 of that millisecond
SELECT uuidv7_at('2024-05-06 07:08:09.123456+00');
SELECT uuidv7_at('1970-01-01 00:00:00+00'), uuidv7_at('10889-08-02 05:31:50.655+00');
SELECT uuidv7_at(uuidv7_timestamp(:'u')) <= :'u'::uuid AS lower,
       uuidv7_at(uuidv7_timestamp(:'u') + interval '1 millisecond') > :'u'::uuid AS upper;

-- a range of time is a range of the primary key
CREATE TABLE v7_events (id uuid PRIMARY KEY, n int);
INSERT INTO v7_events SELECT uuidv7_from_time(now() - g * interval '1 minute'), g FROM generate_series(1, 10080) g;
ANALYZE v7_events;
EXPLAIN (COSTS OFF) SELECT count(*) FROM v7_events WHERE id >= uuidv7_at(now() - interval '1 hour');
SELECT count(*) FROM v7_events WHERE id >= uuidv7_at(now() - interval '1 hour 30 seconds');
DROP TABLE v7_events;

-- bad input (22008) and NULLs
\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql
SELECT uuidv7_at('1969-12-31 23:59:59.999+00');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try($$SELECT uuidv7_from_time('10889-08-02 05:31:50.656+00')$$);
SELECT pg_temp.try($$SELECT uuidv7_from_time('infinity')$$);
SELECT pg_temp.try($$SELECT uuidv7_at('-infinity')$$);
SELECT pg_temp.try($$SELECT snowflake_uuidv7('-100 years')$$);
SELECT pg_temp.try($$SELECT snowflake_uuidv7('10000 years')$$);
SELECT pg_temp.try($$SELECT snowflake_uuidv7('1 fortnight')$$);
SELECT snowflake_uuidv7(NULL) IS NULL AS shift_null, uuidv7_from_time(NULL) IS NULL AS a, uuidv7_at(NULL) IS NULL AS b, uuidv7_timestamp(NULL) IS NULL AS c;
