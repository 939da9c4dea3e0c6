#!/usr/bin/env bash
# Installs what is missing, builds and installs the extension, starts a throwaway PostgreSQL
# with the extension preloaded (data in build/demo, loopback and a private socket only), and
# shows snowflake() at work. The server keeps running; the script prints how to use it.
source "$(dirname "$0")/common.sh"

install_packages
ensure_server_user
prepare_work
build_and_install

DEMO=$WORK/demo
DATA=$DEMO/data
SOCK=$DEMO/sock
# A Unix socket path must fit in 107 bytes.
[ ${#SOCK} -lt 90 ] || SOCK=/tmp/snowflake-demo-$(run_user)
as_user mkdir -p "$DEMO" "$SOCK"

if [ -f "$DATA/postmaster.pid" ]; then
  log "stopping the previous demo server"
  as_user "$PG_BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null || true
fi
if [ ! -f "$DATA/PG_VERSION" ]; then
  as_user "$PG_BIN/initdb" -D "$DATA" -U postgres -A trust --no-instructions >/dev/null
fi
PORT=$(free_port "${SNOWFLAKE_DEMO_PORT:-54329}")
as_user tee "$DATA/postgresql.auto.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'snowflake'
snowflake.shard_id = 1
CONF
as_user "$PG_BIN/pg_ctl" -D "$DATA" -l "$DEMO/server.log" -w start >/dev/null

PSQL=("$PG_BIN/psql" -X -h "$SOCK" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
as_user "${PSQL[@]}" <<'SQL'
CREATE EXTENSION IF NOT EXISTS snowflake;
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
SQL

cat <<EOF2

The demo server is running (PostgreSQL $PG_MAJOR, port $PORT, loopback and $SOCK only).
Connect:  $( [ "$(id -u)" = 0 ] && echo "runuser -u $SERVER_USER -- " )$PG_BIN/psql -h $SOCK -p $PORT -U postgres
      or: psql "host=127.0.0.1 port=$PORT user=postgres"
Stop:     $( [ "$(id -u)" = 0 ] && echo "runuser -u $SERVER_USER -- " )$PG_BIN/pg_ctl -D $DATA stop
EOF2
