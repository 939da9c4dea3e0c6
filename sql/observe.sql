-- Causal order across servers: after snowflake_observe(id), every ID this server issues is
-- above id, of every kind and on every shard; an ID too far ahead is refused. (The two-server
-- test with clocks 5 s apart is test/t/011_causality.pl.)
SET timezone = 'UTC';

-- An ID from a server whose clock is 1 s ahead: without observing, this server's IDs are
-- below it for 1 s.
SELECT snowflake_at(clock_timestamp() + interval '1 s') | (7 << 10) | 1023 AS ahead \gset
SELECT snowflake() < :ahead AS below_before_observing;
SELECT snowflake_observe(:ahead);
SELECT snowflake() > :ahead AS above_after,
       snowflake(0) > :ahead AS shard_0_above, snowflake(8191) > :ahead AS shard_8191_above;
-- the 128-bit kinds are above its millisecond too
SELECT uuidv7_timestamp(snowflake_uuidv7()) > snowflake_timestamp(:ahead) AS uuidv7_later,
       ulid_timestamp(ulid()) > snowflake_timestamp(:ahead) AS ulid_later;
SELECT observed_moves >= 1 AS counted, observed_until = snowflake_timestamp(:ahead) AS until
  FROM snowflake_status() LIMIT 1;

-- An ID in the past changes nothing, and is cheap (no wait, no count).
SELECT observed_moves AS moves FROM snowflake_status() LIMIT 1 \gset
SELECT snowflake_observe(snowflake_at(now() - interval '1 day'));
SELECT observed_moves = :moves AS not_counted FROM snowflake_status() LIMIT 1;

-- UUIDv7 and ULID from elsewhere
SELECT uuidv7_at(clock_timestamp() + interval '1.2 s') AS u \gset
SELECT snowflake_observe(:'u'::uuid);
SELECT snowflake_uuidv7() > :'u'::uuid AS uuid_above, ulid() > ulid_at(uuidv7_timestamp(:'u')) AS ulid_above,
       snowflake() > snowflake_at(uuidv7_timestamp(:'u')) AS snowflake_above;
SELECT ulid_at(clock_timestamp() + interval '1.4 s') AS l \gset
SELECT snowflake_observe(:'l'::ulid);
SELECT ulid() > :'l'::ulid AS ulid_above_ulid;

-- On a logical-replication subscriber: a trigger observes every row that arrives, so that
-- rows written here afterwards get larger IDs than the rows they follow. (ENABLE ALWAYS: the
-- apply worker fires it too.)
CREATE TABLE messages (id bigint PRIMARY KEY DEFAULT snowflake(), body text);
CREATE FUNCTION observe_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snowflake_observe(NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER messages_observe AFTER INSERT ON messages
  FOR EACH ROW EXECUTE FUNCTION observe_id();
ALTER TABLE messages ENABLE ALWAYS TRIGGER messages_observe;
-- a row from a server whose clock is 1.6 s ahead, then a local one
INSERT INTO messages VALUES (snowflake_at(clock_timestamp() + interval '1.6 s') | 1023, 'remote');
INSERT INTO messages (body) VALUES ('local reply');
SELECT body FROM messages ORDER BY id;

-- A reply written from a message it answers: observe the message's ID in the same statement,
-- before the reply's own ID is made (a column DEFAULT is evaluated before BEFORE triggers, so
-- the ID is set here).
CREATE TABLE replies (id bigint PRIMARY KEY, parent_id bigint NOT NULL, body text);
CREATE FUNCTION reply_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snowflake_observe(NEW.parent_id);
  NEW.id := snowflake();
  RETURN NEW;
END $$;
CREATE TRIGGER replies_id BEFORE INSERT ON replies FOR EACH ROW EXECUTE FUNCTION reply_id();
INSERT INTO replies (parent_id, body)
VALUES (snowflake_at(clock_timestamp() + interval '1.8 s') | 1023, 'reply');
SELECT id > parent_id AS reply_above_parent FROM replies;
DROP TABLE messages, replies;

-- Refused: further ahead than snowflake.max_clock_offset (5 s by default), a UUID of another
-- version, a negative ID. Nothing moves. (How far ahead depends on the clock: digits masked.)
SHOW snowflake.max_clock_offset;
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]+ ms', 'N ms');
END $$;
SELECT observed_until AS until FROM snowflake_status() LIMIT 1 \gset
SELECT call, pg_temp.outcome('SELECT ' || call) AS outcome FROM (VALUES
  ('snowflake_observe(snowflake_at(clock_timestamp() + interval ''6 s''))'),
  ('snowflake_observe(uuidv7_at(clock_timestamp() + interval ''1 hour''))'),
  ('snowflake_observe(ulid_at(''3000-01-01''))'),
  ('snowflake_observe(''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11''::uuid)'),
  ('snowflake_observe(-1::bigint)'),
  ('snowflake_observe(NULL::bigint)')
) AS c(call);
SELECT observed_until = :'until' AS unchanged FROM snowflake_status() LIMIT 1;
SELECT snowflake() < snowflake_at(clock_timestamp() + interval '2 s') AS not_moved;
-- a setting for superusers: an ordinary role cannot widen the bound
CREATE ROLE regress_observer;
SET ROLE regress_observer;
SET snowflake.max_clock_offset = '1h';
RESET ROLE;
DROP ROLE regress_observer;

-- The tests after this one compare IDs with the clock: wait until it has passed what was
-- observed.
SELECT pg_sleep(greatest(0, extract(epoch FROM observed_until - clock_timestamp())) + 0.01)
  FROM snowflake_status() LIMIT 1;
SELECT snowflake() > snowflake_at(clock_timestamp() - interval '1 s') AS back_with_the_clock,
       snowflake() < snowflake_at(clock_timestamp() + interval '1 s') AS not_ahead;
