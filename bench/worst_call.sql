-- The worst single snowflake(40) call over 3 s, in ms: three ends of a 1 s reservation
-- window fall in it (bench/reservation.sh).
CREATE FUNCTION pg_temp.worst_call() RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE
  t0 timestamptz;
  worst float8 := 0;
  stop timestamptz := clock_timestamp() + interval '3 seconds';
BEGIN
  WHILE clock_timestamp() < stop LOOP
    t0 := clock_timestamp();
    PERFORM snowflake(40);
    worst := greatest(worst, extract(epoch FROM clock_timestamp() - t0) * 1000);
  END LOOP;
  RETURN worst;
END $f$;
SELECT round(pg_temp.worst_call()::numeric, 3);
