-- Names PostgreSQL itself has on some versions (uuidv7() from 18, uuid_extract_version() and
-- uuid_extract_timestamp() from 17): the extension's own functions mean the same on every
-- version, no call of theirs is ambiguous, and pg_catalog shadows none of them.
-- (Expected: core_names.out for 15 and 16, core_names_1.out for 17, core_names_2.out for 18+.)
SET timezone = 'UTC';

-- what this server has in pg_catalog under those names
SELECT p.oid::regprocedure AS core_function
  FROM pg_proc p
 WHERE p.pronamespace = 'pg_catalog'::regnamespace
   AND p.proname IN ('uuidv7', 'uuidv4', 'uuid_extract_version', 'uuid_extract_timestamp')
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- no function of the extension has the name and argument types of one in pg_catalog
SELECT count(*) AS shadowed
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE EXISTS (SELECT FROM pg_proc c
                WHERE c.pronamespace = 'pg_catalog'::regnamespace
                  AND c.proname = p.proname AND c.proargtypes = p.proargtypes);

-- every literal-argument form of ours resolves to one function
SELECT uuidv7_timestamp(uuidv7_from_time('2024-05-06 07:08:09.123+00')) AS from_time,
       uuidv7_at('2024-05-06 07:08:09.123+00') AS at,
       substr(snowflake_uuidv7('-1 hour')::text, 15, 1) AS shifted,
       ulid_timestamp(ulid_at('2024-05-06 07:08:09.123+00')) AS ulid_at;

-- a bare uuidv7(): none before 18 (the extension's is snowflake_uuidv7()); core's from 18 on
SELECT substr(uuidv7()::text, 15, 1) AS bare_uuidv7;
SELECT substr(uuidv7('2024-05-06 07:08:09+00')::text, 15, 1) AS bare_uuidv7_literal;

-- where core has them, its functions and ours agree on every value ours make
CREATE FUNCTION pg_temp.disagreements(core text, ours text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  IF to_regprocedure(format('pg_catalog.%s(uuid)', core)) IS NULL THEN
    RETURN 'not in this server';
  END IF;
  EXECUTE format($q$
    SELECT count(*) FILTER (WHERE pg_catalog.%s(u) IS DISTINCT FROM %s(u))
      FROM (SELECT snowflake_uuidv7() FROM generate_series(1, 1000)
            UNION ALL SELECT uuidv7_from_time('1970-01-01 00:00:00+00')
            UNION ALL SELECT uuidv7_at('10889-08-02 05:31:50.655+00')
            UNION ALL SELECT snowflake_uuidv7('-1 year')
            UNION ALL SELECT gen_random_uuid()
            UNION ALL SELECT '00000000-0000-0000-0000-000000000000') s(u)$q$, core, ours) INTO n;
  RETURN n || ' of 1005 differ';
END $$;
SELECT pg_temp.disagreements('uuid_extract_timestamp', 'uuidv7_timestamp') AS timestamp;
