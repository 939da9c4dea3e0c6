-- pg_temp.outcome_detail(query): as pg_temp.outcome (outcome.sql), with the error's DETAIL
-- after its message: 'ok: ' and the value, or SQLSTATE: message (DETAIL) (read with \i;
-- sql/include/ is not a test of its own).
CREATE FUNCTION pg_temp.outcome_detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; d text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ': ' || SQLERRM || coalesce(' (' || nullif(d, '') || ')', '');
END $$;
