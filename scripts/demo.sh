#!/usr/bin/env bash
# Installs what is missing, builds and installs the extension, starts a throwaway PostgreSQL
# with the extension preloaded (data in build/demo, loopback and a private socket only), and
# shows snowflake(), snowflake_uuidv7() and ulid() at work. The server keeps running; the script prints how to use it.
source "$(dirname "$0")/common.sh"

install_packages
ensure_server_user
prepare_work
build_and_install

start_server "$WORK/demo" "${SNOWFLAKE_DEMO_PORT:-54329}" tcp <<'CONF'
snowflake.shard_id = 1
CONF

as_user "${PSQL[@]}" -e <<'SQL'
DROP EXTENSION IF EXISTS snowflake CASCADE;  -- a throwaway server: start from the built version
CREATE EXTENSION snowflake;
DROP TABLE IF EXISTS demo_orders;
CREATE TABLE demo_orders (
  id bigint PRIMARY KEY DEFAULT snowflake(),
  item text NOT NULL
);
INSERT INTO demo_orders (item) VALUES ('apple'), ('pear'), ('plum');
INSERT INTO demo_orders (id, item) VALUES (snowflake(42), 'fig from shard 42');
SELECT o.id, o.item, d.ts, d.shard, d.seq
  FROM demo_orders o, snowflake_decode(o.id) d ORDER BY o.id;
EXPLAIN (COSTS OFF)
  SELECT * FROM demo_orders WHERE id >= snowflake_at(now() - interval '1 day');
SELECT snowflake_uuidv7() AS uuidv7, ulid() AS ulid;
SELECT kind, shard, last_ts, last_seq, lead_ms FROM snowflake_streams();
SELECT reserved_until, writer_pid, clock_gap_ms, generation_refused FROM snowflake_status();
SQL

cat <<EOF2

The demo server is running: PostgreSQL $PG_MAJOR on 127.0.0.1 port $SERVER_PORT and socket
directory $SERVER_SOCK, data in $SERVER_DATA (trust authentication: a throwaway).
Connect:  $PG_BIN/psql "host=127.0.0.1 port=$SERVER_PORT user=postgres"
Stop:     $( [ "$(id -u)" = 0 ] && echo "runuser -u $SERVER_USER -- " )$PG_BIN/pg_ctl -D $SERVER_DATA stop
EOF2
