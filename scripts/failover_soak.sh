#!/usr/bin/env bash
# Failover under a real failover manager: pg_auto_failover (Debian's postgresql-15-auto-failover)
# runs a monitor and two nodes on loopback, with the extension preloaded. pgbench inserts IDs
# of every kind into the primary, shard 9 runs ahead of the clock, and the primary's
# postmaster is killed under that load. pg_auto_failover promotes the secondary, whose clock
# runs 10 minutes behind (libfaketime), and pgbench goes on against it. Then every ID must be
# distinct, and every ID issued after the failover above every ID issued before it: the
# script prints both counts and fails unless both are 0. Part of scripts/soak.sh.
#
# pg_autoctl starts its servers with Debian's socket directory, /var/run/postgresql, which
# only the postgres account may write: so the servers run as postgres, and the script needs
# root. They listen on localhost and that socket directory only.
source "$(dirname "$0")/common.sh"

[ "$PG_MAJOR" = 15 ] || die "pg_auto_failover is packaged here for PostgreSQL 15 only"
[ "$(id -u)" = 0 ] || die "run as root: the servers run as the postgres account"
install_packages "postgresql-$PG_MAJOR-auto-failover" pg-auto-failover-cli libfaketime
ensure_server_user
prepare_work
build_and_install

FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
DIR=/var/tmp/snowflake-failover
SOCK=/var/run/postgresql
as_user() { runuser -u postgres -- "$@"; }
run_user() { echo postgres; }
for d in monitor node1 node2; do
  [ ! -f "$DIR/$d/postmaster.pid" ] ||
    as_user "$PG_BIN/pg_ctl" -D "$DIR/$d" -m immediate stop >/dev/null 2>&1 || true
done
rm -rf "$DIR"
mkdir -p "$DIR" "$SOCK"
mkdir -p "$DIR/run"
chown -R postgres: "$DIR"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for d in monitor node1 node2; do
    as_user "$PG_BIN/pg_ctl" -D "$DIR/$d" -m immediate stop >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT

PM=$(free_port 55430)
P1=$(free_port $((PM + 1)))
P2=$(free_port $((P1 + 1)))
autoctl() { as_user env PGHOST="$SOCK" XDG_CONFIG_HOME="$DIR/config" XDG_DATA_HOME="$DIR/data" XDG_RUNTIME_DIR="$DIR/run" \
  PATH="$PG_BIN:$PATH" pg_autoctl "$@"; }

log "pg_auto_failover monitor on port $PM"
autoctl create monitor --pgdata "$DIR/monitor" --pgport "$PM" --hostname localhost \
  --listen localhost --auth trust --no-ssl --pgctl "$PG_BIN/pg_ctl" >"$DIR/monitor.create.log" 2>&1 ||
  { cat "$DIR/monitor.create.log"; die "pg_autoctl create monitor failed"; }
autoctl run --pgdata "$DIR/monitor" >"$DIR/monitor.log" 2>&1 &
pids+=($!)
MONITOR=$(autoctl show uri --pgdata "$DIR/monitor" --formation monitor)

# A node: created, its configuration given the extension, then run by pg_autoctl. The second
# one is a base backup of the first (pg_autoctl makes it), and so has its configuration.
start_node() {
  local name=$1 port=$2
  shift 2
  log "pg_auto_failover node $name on port $port"
  autoctl create postgres --pgdata "$DIR/$name" --pgport "$port" --hostname localhost \
    --listen localhost --name "$name" --monitor "$MONITOR" --auth trust --no-ssl \
    --pgctl "$PG_BIN/pg_ctl" \
    >"$DIR/$name.create.log" 2>&1 ||
    { cat "$DIR/$name.create.log"; die "pg_autoctl create postgres ($name) failed"; }
  if [ "$name" = node1 ]; then
    as_user tee -a "$DIR/$name/postgresql.conf" >/dev/null <<CONF
shared_preload_libraries = 'snowflake'
snowflake.shard_id = 3
snowflake.max_lead = '10s'
CONF
    as_user "$PG_BIN/pg_ctl" -D "$DIR/$name" -m fast stop >/dev/null 2>&1 || true
  fi
  as_user env "$@" XDG_CONFIG_HOME="$DIR/config" XDG_DATA_HOME="$DIR/data" XDG_RUNTIME_DIR="$DIR/run" PATH="$PG_BIN:$PATH" \
    pg_autoctl run --pgdata "$DIR/$name" >"$DIR/$name.log" 2>&1 &
  pids+=($!)
}

state() { autoctl show state --pgdata "$DIR/monitor" 2>/dev/null; }
wait_for() {
  local what=$1 pattern=$2 i
  for i in $(seq 1 180); do
    if state | grep -Eq "$pattern"; then return 0; fi
    sleep 1
  done
  state
  die "timed out waiting for $what"
}

start_node node1 "$P1"
wait_for "node1 as a single primary" "node1 .*\| *single *\| *single"
# The secondary's clock runs 10 minutes behind the primary's.
start_node node2 "$P2" LD_PRELOAD="$FAKETIME_LIB" FAKETIME=-10m DONT_FAKE_MONOTONIC=1 \
  FAKETIME_DONT_FAKE_MONOTONIC=1
wait_for "node1 primary and node2 secondary" "node2 .*\| *secondary *\| *secondary"
state

PSQL_ANY=("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK,$SOCK" -p "$P1,$P2" -U "$(run_user)" -d postgres)
q() { as_user env PGTARGETSESSIONATTRS=read-write "${PSQL_ANY[@]}" -c "$1"; }
q "CREATE EXTENSION snowflake;
   CREATE TABLE ids (n bigserial, era int, sf bigint, v7 uuid, ul ulid);"

cat >"$DIR/load.sql" <<'SQL'
INSERT INTO ids (era, sf, v7, ul) SELECT :era, snowflake(), snowflake_uuidv7(), ulid() FROM generate_series(1, 1000);
INSERT INTO ids (era, sf) SELECT :era, snowflake(9) FROM generate_series(1, 10000);
SQL
chown postgres: "$DIR/load.sql"
pgbench_run() {
  local era=$1 seconds=$2
  as_user env PGTARGETSESSIONATTRS=read-write "$PG_BIN/pgbench" -n -h "$SOCK,$SOCK" -p "$P1,$P2" \
    -U "$(run_user)" -c 4 -j 2 -T "$seconds" -D era="$era" -f "$DIR/load.sql" postgres \
    >"$DIR/pgbench.$era.log" 2>&1 || true
  grep -E "number of transactions actually processed|aborted" "$DIR/pgbench.$era.log" || true
}

log "load on node1, then its postmaster is killed under the load"
pgbench_run 1 30 &
load=$!
sleep 20
primary_pid=$(head -1 "$DIR/node1/postmaster.pid")
log "killing node1's postmaster ($primary_pid)"
kill -9 "$primary_pid"
wait "$load" || true
started=$(date +%s)
wait_for "node2 promoted" "node2 .*\| *(wait_primary|primary) *\| *(wait_primary|primary)"
log "node2 promoted after $(( $(date +%s) - started )) s"
behind=$(( $(date +%s) - $(q "SELECT round(extract(epoch FROM clock_timestamp()))") ))
log "node2's clock is $behind s behind"
[ "$behind" -gt 500 ] || die "node2's clock is not behind: the run would prove nothing"
pgbench_run 2 10

result=$(q "WITH before AS (SELECT snowflake_shard(sf) AS shard, max(sf) AS top
                  FROM ids WHERE era = 1 AND sf IS NOT NULL GROUP BY 1)
            SELECT (SELECT count(*) FROM ids),
                   (SELECT count(sf) - count(DISTINCT sf) FROM ids)
                 + (SELECT count(v7) - count(DISTINCT v7) FROM ids)
                 + (SELECT count(ul) - count(DISTINCT ul) FROM ids),
                   (SELECT count(*) FROM ids a JOIN before b ON snowflake_shard(a.sf) = b.shard
                     WHERE a.era = 2 AND a.sf <= b.top)
                 + (SELECT count(*) FROM ids WHERE era = 2 AND v7 <= (SELECT max(v7::text)::uuid FROM ids WHERE era = 1))
                 + (SELECT count(*) FROM ids WHERE era = 2 AND ul <= (SELECT max(ul) FROM ids WHERE era = 1)),
                   (SELECT count(*) FROM ids WHERE era = 1), (SELECT count(*) FROM ids WHERE era = 2)")
IFS='|' read -r rows dups lower before after <<<"$result"
echo "failover under pg_auto_failover: $rows rows ($before before the failover, $after after)," \
  "$dups duplicate IDs, $lower IDs after the failover at or below one issued before it"
[ "$before" -gt 0 ] && [ "$after" -gt 0 ] || die "the load did not run on both sides of the failover"
[ "$dups" = 0 ] && [ "$lower" = 0 ]
