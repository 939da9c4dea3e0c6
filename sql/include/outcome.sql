-- pg_temp.outcome(query): the outcome of a call, 'ok: ' and its value, or the SQLSTATE and
-- message of its error (read with \i; sql/include/ is not a test of its own).
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
