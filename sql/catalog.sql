-- One row per edge input of every function, with its value or its SQLSTATE and message; then
-- the functions' security properties, and what an ordinary user and pg_monitor may do.
-- (Settings, shards and failing statements: bad_input.sql.)
SET timezone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set outcome_sql :abs_srcdir '/sql/include/outcome.sql'
\i :outcome_sql

SELECT call, pg_temp.outcome('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  ('snowflake(NULL)'),
  ('snowflake(-1)'),
  ('snowflake(8192)'),
  ('snowflake_shard(snowflake(8191))'),
  ('snowflake_decode(NULL)'),
  ('snowflake_decode(-1)'),
  ('snowflake_decode(0)'),
  ('snowflake_decode(9223372036854775807)'),
  ('snowflake_timestamp(-9223372036854775808)'),
  ('snowflake_shard(NULL)'),
  ('snowflake_seq(-1)'),
  ('snowflake_at(NULL)'),
  ('snowflake_at(''2019-12-31 23:59:59.999+00'')'),
  ('snowflake_at(''2054-11-03 19:53:47.775+00'')'),
  ('snowflake_at(''2054-11-03 19:53:47.776+00'')'),
  ('snowflake_at(''infinity'')'),
  ('uuidv7_from_time(NULL::timestamptz)'),
  ('substr(uuidv7_from_time(''1970-01-01 00:00:00+00'')::text, 1, 15)'),
  ('uuidv7_from_time(''1969-12-31 23:59:59.999+00'')'),
  ('uuidv7_from_time(''10889-08-02 05:31:50.656+00'')'),
  ('uuidv7_at(''-infinity'')'),
  ('uuidv7_at(''10889-08-02 05:31:50.655+00'')'),
  ('uuidv7_timestamp(NULL)'),
  ('uuidv7_timestamp(''00000000-0000-0000-0000-000000000000'')'),
  ('uuidv7_timestamp(''ffffffff-ffff-7fff-bfff-ffffffffffff'')'),
  ('uuidv7_timestamp(''ffffffff-ffff-7fff-ffff-ffffffffffff'')'),
  ('uuidv7_timestamp(gen_random_uuid())'),
  ('ulid_from_time(NULL)'),
  ('ulid_from_time(''infinity'')'),
  ('ulid_from_time(''1969-12-31 23:59:59+00'')'),
  ('ulid_at(''10889-08-02 05:31:50.656+00'')'),
  ('ulid_at(''1970-01-01 00:00:00+00'')'),
  ('ulid_timestamp(''7ZZZZZZZZZZZZZZZZZZZZZZZZZ'')'),
  ('ulid_timestamp(''00000000000000000000000000'')'),
  ('''''::ulid'),
  ('''   01ARZ3NDEKTSV4RRFFQ69G5FAV''::ulid'),
  ('''01ARZ3NDEKTSV4RRFFQ69G5FAV ''::ulid'),
  ('''01ARZ3NDEKTSV4RRFFQ69G5FA!''::ulid'),
  ('''8ZZZZZZZZZZZZZZZZZZZZZZZZZ''::ulid'),
  ('''01ARZ3NDEKTSV4RRFFQ69G5FAVA''::ulid'),
  ('''\x''::bytea::ulid'),
  ('''\x000102030405060708090a0b0c0d0e0f10''::bytea::ulid'),
  ('''\x000102030405060708090a0b0c0d0e0f''::bytea::ulid'),
  ('NULL::ulid::uuid'),
  ('''ffffffff-ffff-ffff-ffff-ffffffffffff''::uuid::ulid'),
  ('typeid(NULL, gen_random_uuid())'),
  ('typeid('''', ''ffffffff-ffff-ffff-ffff-ffffffffffff'')'),
  ('typeid(''a'', ''00000000-0000-0000-0000-000000000000'')'),
  ('length(typeid(repeat(''z'', 63), gen_random_uuid()))'),
  ('typeid(''Z'', ''00000000-0000-0000-0000-000000000000'')'),
  ('typeid_uuid(NULL)'),
  ('typeid_uuid(''7zzzzzzzzzzzzzzzzzzzzzzzzz'')'),
  ('typeid_uuid(''8zzzzzzzzzzzzzzzzzzzzzzzzz'')'),
  ('typeid_uuid(''7ZZZZZZZZZZZZZZZZZZZZZZZZZ'')'),
  ('typeid_uuid('''')'),
  ('typeid_prefix(NULL)'),
  ('typeid_prefix(''00000000000000000000000000'')'),
  ('typeid_prefix(''a_00000000000000000000000000'')'),
  ('typeid_prefix(''a_0000000000000000000000000'')')
) AS c(call);

-- the snowflake forms with the epoch as an argument (IMMUTABLE): the one-argument forms'
-- edges, and epochs that snowflake.epoch would refuse
SELECT call, pg_temp.outcome('SELECT (' || call || ')::text') AS outcome FROM (VALUES
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'', epoch => ''2020-01-01 00:00:00+00'')'),
  ('snowflake_at(NULL, timestamptz ''2024-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'', NULL::timestamptz)'),
  ('snowflake_at(timestamptz ''2023-12-31 23:59:59.999+00'', epoch => ''2024-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2058-11-03 19:53:47.775+00'', epoch => ''2024-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2058-11-03 19:53:47.776+00'', epoch => ''2024-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''infinity'', epoch => ''2024-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'', epoch => ''infinity'')'),
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'', epoch => ''2024-01-01 00:00:00.0005+00'')'),
  ('snowflake_at(timestamptz ''2026-11-20 00:00:00+00'', epoch => ''1969-12-31 23:59:59.999+00'')'),
  ('snowflake_at(timestamptz ''2100-01-01 00:00:00+00'', epoch => ''2100-01-01 00:00:00+00'')'),
  ('snowflake_at(timestamptz ''2100-01-01 00:00:00+00'', epoch => ''2100-01-01 00:00:00.001+00'')'),
  ('snowflake_timestamp(0, timestamptz ''2024-01-01 00:00:00+00'')'),
  ('snowflake_timestamp(9223372036854775807, timestamptz ''2024-01-01 00:00:00+00'')'),
  ('snowflake_timestamp(9223372036854775807, timestamptz ''2100-01-01 00:00:00+00'')'),
  ('snowflake_timestamp(-1, timestamptz ''2024-01-01 00:00:00+00'')'),
  ('snowflake_timestamp(NULL, timestamptz ''2024-01-01 00:00:00+00'')'),
  ('snowflake_timestamp(0, ''-infinity''::timestamptz)'),
  ('snowflake_timestamp(0, timestamptz ''2024-01-01 00:00:00.001+00'' - interval ''1 microsecond'')'),
  ('snowflake_timestamp(snowflake_at(timestamptz ''2026-11-20 12:34:56.789+00'', timestamptz ''2024-01-01+00'') + 1023, timestamptz ''2024-01-01+00'')')
) AS c(call);

-- no function runs with its owner's rights (counted without core's names, which the extension
-- declares on the versions that lack them: core_names)
SELECT count(*) AS functions, count(*) FILTER (WHERE p.prosecdef) AS security_definer
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname NOT IN ('uuidv7', 'uuid_extract_version', 'uuid_extract_timestamp');
SELECT count(*) AS security_definer_core_names
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname IN ('uuidv7', 'uuid_extract_version', 'uuid_extract_timestamp') AND p.prosecdef;

-- an ordinary user generates and decodes every kind and changes no setting; a member of
-- pg_monitor reads the status
CREATE ROLE regress_snowflake_catalog_user;
SET ROLE regress_snowflake_catalog_user;
SELECT snowflake_shard(snowflake()) AS shard, substr(snowflake_uuidv7()::text, 15, 1) AS v7,
       ulid_timestamp(ulid()) <= clock_timestamp() + interval '1 second' AS ulid_ok;
SELECT pg_temp.outcome('SELECT count(*) FROM snowflake_status()') AS status;
RESET ROLE;
GRANT pg_monitor TO regress_snowflake_catalog_user;
SET ROLE regress_snowflake_catalog_user;
SELECT pg_temp.outcome('SELECT count(*) > 0 FROM snowflake_status()') AS status_as_monitor;
SELECT name, pg_temp.outcome(format('SELECT set_config(%L, %L, false)', name, value)) AS outcome
  FROM (VALUES ('snowflake.shard_id', '1'), ('snowflake.epoch', '0'),
               ('snowflake.max_lead', '0'), ('snowflake.reservation_window', '10')) AS s(name, value);
RESET ROLE;
DROP ROLE regress_snowflake_catalog_user;
