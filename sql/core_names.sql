-- Names PostgreSQL itself has on some versions (uuidv7() from 18, uuid_extract_version() and
-- uuid_extract_timestamp() from 17): the extension's own functions mean the same on every
-- version, no call of theirs is ambiguous, and pg_catalog shadows none of them. The extension
-- declares core's names in its schema on every version: a bare call is core's where core has
-- one, and a dump of 15 to 17 (DEFAULT public.uuidv7()) restores on every version.
-- (Expected: core_names.out for 15 and 16, core_names_1.out for 17, core_names_2.out for 18+.)
SET timezone = 'UTC';

-- what this server has in pg_catalog under those names
SELECT p.oid::regprocedure AS core_function
  FROM pg_proc p
 WHERE p.pronamespace = 'pg_catalog'::regnamespace
   AND p.proname IN ('uuidv7', 'uuidv4', 'uuid_extract_version', 'uuid_extract_timestamp')
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- no function of the extension but core's names has the name and argument types of one in
-- pg_catalog
SELECT count(*) AS shadowed
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname NOT IN ('uuidv7', 'uuid_extract_version', 'uuid_extract_timestamp')
   AND EXISTS (SELECT FROM pg_proc c
                WHERE c.pronamespace = 'pg_catalog'::regnamespace
                  AND c.proname = p.proname AND c.proargtypes = p.proargtypes);

-- core's names are the extension's too, in its schema, on every version: what a dump of 15 to
-- 17 names with the schema restores here
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS in_extension_schema
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
 WHERE p.proname IN ('uuidv7', 'uuid_extract_version', 'uuid_extract_timestamp')
   AND p.pronamespace = e.extnamespace
 ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C";
CREATE TEMP TABLE dumped_on_17 (id uuid PRIMARY KEY DEFAULT public.uuidv7(),
  made timestamptz GENERATED ALWAYS AS (public.uuid_extract_timestamp(id)) STORED);
INSERT INTO dumped_on_17 DEFAULT VALUES;
SELECT public.uuid_extract_version(id) AS version, made IS NOT NULL AS has_time,
       public.uuidv7('-1 hour') < id AS shifted_before
  FROM dumped_on_17;

-- every literal-argument form of ours resolves to one function
SELECT uuidv7_timestamp(uuidv7_from_time('2024-05-06 07:08:09.123+00')) AS from_time,
       uuidv7_at('2024-05-06 07:08:09.123+00') AS at,
       substr(snowflake_uuidv7('-1 hour')::text, 15, 1) AS shifted,
       ulid_timestamp(ulid_at('2024-05-06 07:08:09.123+00')) AS ulid_at;

-- Code written for PostgreSQL 18 runs on every version: uuidv7() and uuidv7(interval) are
-- core's from 18 and the extension's before; uuid_extract_version() and
-- uuid_extract_timestamp() core's from 17 and the extension's before (17's core
-- uuid_extract_timestamp() reads version 1 alone: NULL for version 7 there).
SELECT p.oid::regprocedure AS name,
       p.pronamespace = 'pg_catalog'::regnamespace AS core,
       (p.pronamespace = 'pg_catalog'::regnamespace)
         = (current_setting('server_version_num')::int >= CASE WHEN p.proname = 'uuidv7' THEN 180000 ELSE 170000 END)
         AS core_where_core_has_it
  FROM (VALUES ('uuidv7()'), ('uuidv7(interval)'), ('uuid_extract_version(uuid)'),
               ('uuid_extract_timestamp(uuid)')) v(sig)
  JOIN pg_proc p ON p.oid = to_regprocedure(v.sig)
 ORDER BY v.sig COLLATE "C";
SELECT substr(uuidv7()::text, 15, 1) AS bare_uuidv7;
SELECT substr(uuidv7('2024-05-06 07:08:09+00')::text, 15, 1) AS bare_uuidv7_literal;
CREATE TEMP TABLE core18 (id uuid PRIMARY KEY DEFAULT uuidv7(), made timestamptz DEFAULT clock_timestamp(), n int);
INSERT INTO core18 (n) SELECT generate_series(1, 2000);
SELECT count(*) AS rows,
       count(*) FILTER (WHERE uuid_extract_version(id) = 7) AS version_7,
       count(*) FILTER (WHERE uuid_extract_timestamp(id) BETWEEN made - interval '2 s' AND made + interval '1 s') AS at_their_time,
       count(*) FILTER (WHERE uuid_extract_timestamp(id) IS NULL) AS no_time
  FROM core18;
SELECT uuid_extract_timestamp(uuidv7('-1 hour')) < clock_timestamp() - interval '59 minutes' AS shifted_back,
       uuid_extract_timestamp(uuidv7('1 day')) > clock_timestamp() + interval '23 hours' AS shifted_ahead;
-- fixed values: version 7 (RFC 9562's example), version 1, version 4, and variants other than RFC 9562's
SELECT u, uuid_extract_version(u) AS version, uuid_extract_timestamp(u) AS "timestamp"
  FROM (VALUES ('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid), ('c232ab00-9414-11ec-b3c8-9f6bdeced846'),
               ('edb4d8f0-1a80-11e8-98d9-e03f49f7f8f3'), ('919108f7-52d1-4320-9bac-f847db4148a8'),
               ('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f'), ('00000000-0000-0000-0000-000000000000')) v(u);

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
