-- What only the extension form of the trusted edition says (pg_tle's CREATE EXTENSION):
-- trusted/build.sh appends it to trusted/src/snowflake_trusted.sql in
-- trusted/snowflake_trusted_tle.sql, never in the plain installer. Design: docs/managed.md.

-- The configuration, the counters' state and the mask keys are the user's data, not the
-- extension's: pg_dump dumps them (only an extension script may say so).
SELECT pg_catalog.pg_extension_config_dump('snowflake_config', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_counter', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_counter128', '');
-- the mask keys (trusted/src/mask.sql): a dump holds them, as it holds the owner's other rows
SELECT pg_catalog.pg_extension_config_dump('snowflake_mask_keys', '');

-- A restore runs CREATE EXTENSION, which inserts the install's row, and then copies the dumped
-- row in: without this, the copy fails on the one row's key and the configuration is lost.
-- The copied row replaces the install's, and the generators are written for it (an extension's
-- functions are not dumped: CREATE EXTENSION wrote them for no shard). Runs as the role that
-- inserts, which only the owner (or a superuser) may.
CREATE FUNCTION snowflake_config_replace() RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	replaced bigint;
BEGIN
	-- (snowflake_config_guard lets this UPDATE through, as snowflake_configure()'s)
	PERFORM set_config('snowflake_trusted.configuring', 'on', true);
	UPDATE snowflake_config c
		SET shard_id = NEW.shard_id, epoch_ms = NEW.epoch_ms, max_lag_ms = NEW.max_lag_ms;
	GET DIAGNOSTICS replaced = ROW_COUNT;
	PERFORM set_config('snowflake_trusted.configuring', 'off', true);
	IF replaced = 0 THEN
		RETURN NEW;
	END IF;
	PERFORM snowflake_trusted_write_generators();
	RETURN NULL;  -- the row there took the new values: nothing more to insert
END
$$;
REVOKE ALL ON FUNCTION snowflake_config_replace() FROM PUBLIC;
COMMENT ON FUNCTION snowflake_config_replace() IS 'the pg_tle edition''s trigger on snowflake_config, not for calling: a row inserted while the table holds one (the restore of a pg_dump) replaces its values, and the generators are written again for them';
CREATE TRIGGER snowflake_config_replace BEFORE INSERT ON snowflake_config
	FOR EACH ROW EXECUTE FUNCTION snowflake_config_replace();
