-- Bad input to snowflake() and to the settings: each an ERROR with a fitting SQLSTATE, and a
-- failing statement leaves nothing behind. (Every function's edge inputs, one row each, are
-- in catalog.sql.)
-- (bad_input_1.out: PostgreSQL 17 and later print a setting's range with its unit.)
SET timezone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- shard out of range (22023 invalid_parameter_value)
SELECT snowflake(-1);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT snowflake(8192);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try('SELECT snowflake(2147483647)');

-- negative IDs are not snowflake IDs (22003 numeric_value_out_of_range)
SELECT snowflake_decode(-1);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try('SELECT snowflake_timestamp(-1)');
SELECT pg_temp.try('SELECT snowflake_shard(-9223372036854775808)');
SELECT pg_temp.try('SELECT snowflake_seq(-42)');

-- timestamps outside the IDs' range (22008 datetime_value_out_of_range)
SELECT snowflake_at('2019-12-31 23:59:59.999+00');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try($$SELECT snowflake_at('2054-11-03 19:53:47.776+00')$$);
SELECT pg_temp.try($$SELECT snowflake_at('infinity')$$);
SELECT pg_temp.try($$SELECT snowflake_at('-infinity')$$);

-- NULL in, NULL out
SELECT snowflake(NULL) IS NULL AS a, snowflake_timestamp(NULL) IS NULL AS b,
       snowflake_at(NULL) IS NULL AS c, (snowflake_decode(NULL)).ts IS NULL AS d;

-- settings out of range (22023), or the server's alone (55P02: fixed at server start, or
-- set in its configuration, as snowflake.max_lead, whose lead every session shares)
SET snowflake.shard_id = 8192;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SET snowflake.shard_id = -1;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SET snowflake.max_lead = '1h';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.max_lead = -1;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SET snowflake.epoch = '0';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = 'yesterday';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '4102444800001';
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try($$SET snowflake.no_such_setting = 1$$);
SHOW snowflake.epoch;

-- an ordinary user can generate and decode on snowflake.shard_id, but not on another shard
-- without a grant (42501), nor change the shard or the lead bound
CREATE ROLE regress_snowflake_user;
SET ROLE regress_snowflake_user;
SELECT snowflake_shard(snowflake()) AS shard;
SELECT snowflake(9);
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try('SELECT snowflake_status()');
RESET ROLE;
GRANT EXECUTE ON FUNCTION snowflake(integer) TO regress_snowflake_user;
SET ROLE regress_snowflake_user;
SELECT snowflake_shard(snowflake(9)) AS granted;
SET snowflake.shard_id = 1;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT pg_temp.try('SET snowflake.max_lead = 0');
SELECT pg_temp.try($$SELECT set_config('snowflake.shard_id', '2', false)$$);
SHOW snowflake.shard_id;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake(integer) FROM regress_snowflake_user;
DROP ROLE regress_snowflake_user;

-- a failing statement leaves nothing behind
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake(), shard int);
INSERT INTO t (id, shard) SELECT snowflake(s), s FROM generate_series(8190, 8193) s;
\echo SQLSTATE :LAST_ERROR_SQLSTATE
SELECT count(*) FROM t;
DROP TABLE t;
