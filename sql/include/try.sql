-- pg_temp.try(query): 'no error', or the SQLSTATE and message of the query's error (read with
-- \i; sql/include/ is not a test of its own).
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
