-- Instagram's PL/pgSQL next_id(), as Instagram published it (epoch 1314220021721 ms,
-- shard 5), for comparison: the epoch test continues its IDs and the benchmark times it.
CREATE SEQUENCE IF NOT EXISTS insta_seq;
CREATE OR REPLACE FUNCTION insta_next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
