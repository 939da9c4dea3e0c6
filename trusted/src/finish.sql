-- Last in both installers (trusted/build.sh): every SECURITY DEFINER function of the edition
-- resolves names in pg_catalog first, then this schema, never in pg_temp first. Pinned here,
-- where the schema is known (the plain installer has no placeholder for it), for all of them
-- at once, so that none added in another file is missed.
-- The schema is taken by its OID, never through its name's text (which regnamespace would read
-- as an identifier: "Ids" as ids); the ALTER then names it quoted. None may be left unpinned.
DO $$
DECLARE
	f regprocedure;
	nsp oid := (SELECT c.relnamespace FROM pg_class c WHERE c.oid = 'snowflake_config'::regclass);
	schema name := (SELECT n.nspname FROM pg_namespace n WHERE n.oid = nsp);
BEGIN
	FOR f IN SELECT p.oid FROM pg_proc p
		WHERE p.pronamespace = nsp AND p.prosecdef
			AND (p.proconfig IS NULL OR NOT EXISTS
				(SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%'))
	LOOP
		EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, schema);
	END LOOP;
	IF EXISTS (SELECT FROM pg_proc p WHERE p.pronamespace = nsp AND p.prosecdef
			AND NOT (p.proconfig @> ARRAY[format('search_path=pg_catalog, %I, pg_temp', schema)])) THEN
		RAISE EXCEPTION 'a SECURITY DEFINER function of the edition in schema % was not pinned', schema
			USING ERRCODE = 'XX000';
	END IF;
END
$$;

-- Default privileges (ALTER DEFAULT PRIVILEGES ... GRANT ... TO a role, as Supabase sets for
-- anon and authenticated) grant on every object this script made, beside the grants it makes:
-- taken back from the objects no role but the owner may use (the mask keys, setval and UPDATE
-- of the counters and the configuration, the owner's functions). Their grants to PUBLIC
-- (SELECT on the configuration, USAGE on the counters) are the script's own, kept.
DO $$
DECLARE
	schema regnamespace := (SELECT c.relnamespace FROM pg_class c WHERE c.oid = 'snowflake_config'::regclass);
	o record;
BEGIN
	FOR o IN SELECT format('%s %s', CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::regclass) AS obj,
			pg_get_userbyid(a.grantee) AS grantee
		FROM pg_class c, aclexplode(c.relacl) a
		WHERE c.relnamespace = schema AND a.grantee NOT IN (c.relowner, 0)
			AND c.relname IN ('snowflake_config', 'snowflake_counter', 'snowflake_counter128', 'snowflake_mask_keys')
		UNION
		SELECT format('FUNCTION %s', p.oid::regprocedure), pg_get_userbyid(a.grantee)
		FROM pg_proc p, aclexplode(p.proacl) a
		WHERE p.pronamespace = schema AND a.grantee NOT IN (p.proowner, 0)
			AND p.proname IN ('snowflake', 'snowflake_config_guard', 'snowflake_config_replace', 'snowflake_configure',
				'snowflake_trusted_write_generators', 'snowflake_mask_key_add', 'snowflake_mask_key_remove',
				'snowflake_mask_key_fingerprint', 'snowflake_mask_use_pgcrypto')
			AND NOT EXISTS (SELECT FROM aclexplode(p.proacl) e WHERE e.grantee = 0)
	LOOP
		EXECUTE format('REVOKE ALL ON %s FROM %I', o.obj, o.grantee);
	END LOOP;
END
$$;
