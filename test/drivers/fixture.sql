-- What every driver test reads: 200 IDs of each kind, issued in the order of k (the
-- generators are monotonic across the server), and the server's own text and decoding of
-- each. Temporary tables: each test's session has its own.
CREATE TEMP TABLE ids (
  k integer PRIMARY KEY,
  sf bigint NOT NULL DEFAULT snowflake(),
  u uuid NOT NULL DEFAULT snowflake_uuidv7(),
  l ulid NOT NULL DEFAULT ulid()
);
INSERT INTO ids (k) SELECT g FROM generate_series(1, 200) g;

-- Where a test writes back the values its driver holds, for the server to compare.
CREATE TEMP TABLE back (k integer PRIMARY KEY, sf bigint, u uuid, l ulid);

CREATE TEMP VIEW reference AS
SELECT k, sf::text AS sf_text, u::text AS u_text, l::text AS l_text,
       encode(l::bytea, 'hex') AS l_hex,
       (extract(epoch FROM d.ts) * 1000)::bigint AS sf_ms, d.shard AS sf_shard, d.seq AS sf_seq,
       (extract(epoch FROM uuidv7_timestamp(u)) * 1000)::bigint AS u_ms,
       (extract(epoch FROM ulid_timestamp(l)) * 1000)::bigint AS l_ms,
       current_setting('snowflake.epoch')::bigint AS epoch_ms
  FROM ids, snowflake_decode(sf) d;

-- The table of the examples of docs/applications.md ("Using the IDs from applications").
CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake(), item text);
INSERT INTO orders (item) VALUES ('tea'), ('cake');
