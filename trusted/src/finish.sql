-- Last in both installers: every SECURITY DEFINER function of the edition resolves names in
-- pg_catalog first, then this schema, never in pg_temp first. Pinned here, where the schema is
-- known (the plain installer has no placeholder for it), for all of them at once, so that none
-- added in another file is missed.
DO $$
DECLARE
	f regprocedure;
	schema name := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = 'snowflake_config'::regclass);
BEGIN
	FOR f IN SELECT p.oid FROM pg_proc p
		WHERE p.pronamespace = schema::regnamespace AND p.prosecdef
			AND (p.proconfig IS NULL OR NOT EXISTS
				(SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%'))
	LOOP
		EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, schema);
	END LOOP;
END
$$;
