-- Causal order across servers: after snowflake_observe(id), every ID this server issues is
-- above id, of every kind and on every shard; an ID too far ahead is refused. (The two-server
-- test with clocks 5 s apart is test/t/012_causality.pl.)
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
-- a sno, observed at the last millisecond of its 4 ms unit: the largest sno of a unit 1.6 s
-- ahead (metabyte, partition and sequence all ones) is below the next sno(), and every kind
-- is past the unit
SELECT (substr(sno_at(clock_timestamp() + interval '1.6 s')::bytea, 1, 5)
        || '\xffffffffff'::bytea)::sno AS s \gset
SELECT snowflake_observe(:'s'::sno);
SELECT sno() > :'s'::sno AS sno_above_sno,
       snowflake_timestamp(snowflake()) >= sno_timestamp(:'s') + interval '4 ms' AS snowflake_past_unit,
       uuidv7_timestamp(snowflake_uuidv7()) >= sno_timestamp(:'s') + interval '4 ms' AS uuidv7_past_unit,
       observed_until = sno_timestamp(:'s') + interval '3 ms' AS until_unit_end
  FROM snowflake_status();

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
CREATE FUNCTION pg_temp.ok_or_error(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]+ ms', 'N ms');
END $$;
SELECT observed_until AS until FROM snowflake_status() \gset
SELECT call, pg_temp.ok_or_error('SELECT ' || call) AS outcome FROM (VALUES
  ('snowflake_observe(snowflake_at(clock_timestamp() + interval ''6 s''))'),
  ('snowflake_observe(uuidv7_at(clock_timestamp() + interval ''1 hour''))'),
  ('snowflake_observe(ulid_at(''3000-01-01''))'),
  ('snowflake_observe(sno_at(''2079-01-01''))'),
  ('snowflake_observe(''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11''::uuid)'),
  ('snowflake_observe(-1::bigint)'),
  ('snowflake_observe(NULL::bigint)')
) AS c(call);
SELECT observed_until = :'until' AS unchanged FROM snowflake_status();
SELECT snowflake() < snowflake_at(clock_timestamp() + interval '2 s') AS not_moved;
-- Observing is a privilege: it moves the IDs' time of every role. An ordinary role gets
-- permission denied, and cannot widen the bound, for itself or by ALTER ROLE (the setting is
-- the server's); the extension's owner may grant observing on.
CREATE ROLE regress_observer;
SET ROLE regress_observer;
SELECT pg_temp.ok_or_error('SELECT snowflake_observe(1::bigint)') AS bigint_form,
       pg_temp.ok_or_error('SELECT snowflake_observe(uuidv7_at(now()))') AS uuid_form,
       pg_temp.ok_or_error('SELECT snowflake_observe(ulid_at(now()))') AS ulid_form,
       pg_temp.ok_or_error('SELECT snowflake_observe(sno_at(now()))') AS sno_form,
       pg_temp.ok_or_error('SELECT snowflake_reservation_create()') AS create_form;
SET snowflake.max_clock_offset = '1h';
RESET ROLE;
ALTER ROLE regress_observer SET snowflake.max_clock_offset = '1h';
SELECT p.oid::regprocedure AS function_of_the_extension_owner, a.privilege_type, a.is_grantable
  FROM pg_proc p, aclexplode(p.proacl) a
 WHERE p.proname IN ('snowflake_observe', 'snowflake_observe_trigger')
   AND a.grantee = (SELECT extowner FROM pg_extension WHERE extname = 'snowflake')
 ORDER BY 1;
GRANT EXECUTE ON FUNCTION snowflake_observe(bigint) TO regress_observer;
SET ROLE regress_observer;
SELECT pg_temp.ok_or_error('SELECT snowflake_observe(1::bigint)') AS granted;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_observe(bigint) FROM regress_observer;
DROP ROLE regress_observer;

-- The apply trigger: observes the named columns (by default the primary key) of each row
-- that replication applies (here as an apply worker applies it, with session_replication_role
-- = replica), and never raises for a value it may not observe (too far ahead, a UUID of
-- another version, a negative ID): it counts them in snowflake_status().observe_skipped.
-- A row written here is left alone: its IDs were issued here.
CREATE TABLE applied (id bigint PRIMARY KEY, u uuid, l ulid, note text);
CREATE TRIGGER applied_observe BEFORE INSERT OR UPDATE ON applied
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger('id', 'u', 'l');
ALTER TABLE applied ENABLE ALWAYS TRIGGER applied_observe;
SELECT observe_skipped AS skipped, observed_moves AS moves FROM snowflake_status() \gset
INSERT INTO applied VALUES (snowflake_at(clock_timestamp() + interval '1 hour'), NULL, NULL, 'written here');
SELECT observe_skipped = :skipped AS local_row_left_alone FROM snowflake_status();
DELETE FROM applied;
SET session_replication_role = replica;
INSERT INTO applied VALUES
  (snowflake_at(clock_timestamp() + interval '1 hour'), NULL, NULL, 'an hour ahead'),
  (-5, gen_random_uuid(), NULL, 'negative, and a v4 UUID'),
  (1, uuidv7_at(clock_timestamp() + interval '1 hour'), ulid_at('3000-01-01'), 'both ahead'),
  (2, NULL, NULL, 'in the past');
SELECT count(*) AS rows_kept FROM applied;
SELECT observe_skipped - :skipped AS skipped_now, observed_moves = :moves AS none_moved
  FROM snowflake_status();
-- a value a little ahead is observed: the next ID is above it
INSERT INTO applied VALUES (snowflake_at(clock_timestamp() + interval '1.5 s') | 1023, NULL, NULL, 'a little ahead');
SELECT snowflake() > max(id) AS above_applied FROM applied WHERE note = 'a little ahead';
-- without arguments, the primary key's columns
CREATE TABLE applied_u (k uuid PRIMARY KEY);
CREATE TRIGGER applied_u_observe BEFORE INSERT ON applied_u
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger();
ALTER TABLE applied_u ENABLE ALWAYS TRIGGER applied_u_observe;
INSERT INTO applied_u VALUES (uuidv7_at(clock_timestamp() + interval '1.6 s'));
RESET session_replication_role;
SELECT snowflake_uuidv7() > k AS above_applied FROM applied_u;
-- what is wrong with the trigger itself is an ERROR
CREATE TABLE applied_bad (id bigint PRIMARY KEY, note text);
CREATE TRIGGER applied_bad_observe BEFORE INSERT ON applied_bad
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger('note');
SELECT pg_temp.ok_or_error($$INSERT INTO applied_bad VALUES (1, 'x')$$) AS wrong_type;
DROP TRIGGER applied_bad_observe ON applied_bad;
CREATE TRIGGER applied_bad_observe BEFORE INSERT ON applied_bad
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger('nope');
SELECT pg_temp.ok_or_error($$INSERT INTO applied_bad VALUES (1, 'x')$$) AS no_column;
DROP TRIGGER applied_bad_observe ON applied_bad;
CREATE TRIGGER applied_bad_observe BEFORE DELETE ON applied_bad
  FOR EACH ROW EXECUTE FUNCTION snowflake_observe_trigger();
INSERT INTO applied_bad VALUES (1, 'x');
SELECT pg_temp.ok_or_error($$DELETE FROM applied_bad$$) AS on_delete;
SELECT pg_temp.ok_or_error('SELECT snowflake_observe_trigger()') AS not_a_trigger;
DROP TABLE applied, applied_u, applied_bad;

-- The replica guard: the same observing, and a row applied by replication (here as an apply
-- worker applies it, with session_replication_role = replica) whose snowflake ID has this
-- server's own shard (5), or whose sno has the partition this server's snos have (5, the
-- shard), is a shard collision: counted, and a WARNING naming the shard.
SELECT shard_id, shard_count, shard_id_source FROM snowflake_status();
CREATE TABLE guarded (id bigint PRIMARY KEY, note text);
CREATE TRIGGER guarded_guard BEFORE INSERT ON guarded
  FOR EACH ROW EXECUTE FUNCTION snowflake_replica_guard();
ALTER TABLE guarded ENABLE ALWAYS TRIGGER guarded_guard;
-- a sno of 2024-01-01 with the given partition, metabyte 0, sequence 1
CREATE FUNCTION pg_temp.sno_of(part int) RETURNS sno LANGUAGE sql AS $$
  SELECT (substr(sno_at('2024-01-01 00:00:00+00')::bytea, 1, 6)
          || decode(lpad(to_hex(part), 4, '0') || '0001', 'hex'))::sno $$;
CREATE TABLE guarded_sno (id sno PRIMARY KEY, note text);
CREATE TRIGGER guarded_sno_guard BEFORE INSERT ON guarded_sno
  FOR EACH ROW EXECUTE FUNCTION snowflake_replica_guard();
ALTER TABLE guarded_sno ENABLE ALWAYS TRIGGER guarded_sno_guard;
SELECT shard_collisions AS collisions FROM snowflake_status() \gset
INSERT INTO guarded VALUES (snowflake(), 'issued here: no collision');
INSERT INTO guarded_sno VALUES (sno(), 'issued here: no collision');
SET session_replication_role = replica;
INSERT INTO guarded VALUES ((1000000::bigint << 23) | (6 << 10), 'shard 6: another server''s');
INSERT INTO guarded VALUES ((1000000::bigint << 23) | (5 << 10), 'shard 5: this server''s');
INSERT INTO guarded VALUES ((1000000::bigint << 23) | (5 << 10) | 1, 'again: counted, reported once');
-- snos: partition 5 counted (the WARNING above was this backend's one for the origin)
INSERT INTO guarded_sno VALUES (pg_temp.sno_of(6), 'partition 6: another server''s');
INSERT INTO guarded_sno VALUES (pg_temp.sno_of(5 + 32768), 'partition 32773: another server''s');
INSERT INTO guarded_sno VALUES (pg_temp.sno_of(5), 'partition 5: this server''s');
RESET session_replication_role;
SELECT shard_collisions - :collisions AS collisions_now,
       (SELECT count(*) FROM guarded) AS rows_kept, (SELECT count(*) FROM guarded_sno) AS snos_kept
  FROM snowflake_status();
-- snowflake.on_shard_collision = error: the row is refused, as a key conflict would be
ALTER SYSTEM SET snowflake.on_shard_collision = 'error';
SELECT pg_reload_conf();
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXIT WHEN current_setting('snowflake.on_shard_collision') = 'error';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SET session_replication_role = replica;
SELECT pg_temp.ok_or_error($$INSERT INTO guarded VALUES ((1000000::bigint << 23) | (5 << 10) | 2, 'x')$$) AS with_error;
SELECT pg_temp.ok_or_error($$INSERT INTO guarded_sno VALUES (pg_temp.sno_of(5), 'x')$$) AS sno_with_error;
RESET session_replication_role;
ALTER SYSTEM RESET snowflake.on_shard_collision;
SELECT pg_reload_conf();
SELECT count(*) AS rows_kept FROM guarded;
SELECT count(*) AS snos_kept FROM guarded_sno;
SELECT pg_temp.ok_or_error('SELECT snowflake_replica_guard()') AS not_a_trigger;
DROP TABLE guarded, guarded_sno;

-- The tests after this one compare IDs with the clock: wait until the lead that observing
-- made has faded (the IDs' time rises at 3/4 of real-time rate until the clock catches up).
DO $$
BEGIN
  FOR i IN 1 .. 300 LOOP
    EXIT WHEN (SELECT clock_gap_ms FROM snowflake_status()) <= 0;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT snowflake() > snowflake_at(clock_timestamp() - interval '1 s') AS back_with_the_clock,
       snowflake() < snowflake_at(clock_timestamp() + interval '1 s') AS not_ahead;
