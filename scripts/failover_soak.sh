#!/usr/bin/env bash
# Failover under a real failover manager: pg_auto_failover (Debian's postgresql-15-auto-failover)
# runs a monitor and two nodes on loopback, with the extension preloaded. pgbench inserts IDs
# of every kind into the primary, shard 9 runs ahead of the clock, and the primary's
# postmaster is killed under that load. pg_auto_failover promotes the secondary, whose clock
# runs 10 minutes behind (libfaketime), and pgbench goes on against it. Then every ID must be
# distinct, and every ID issued after the failover above every ID issued before it: the
# script prints both counts and fails unless both are 0. At the end pg_autoctl is stopped
# first (it starts again a server stopped under it), then any server left, and the script
# fails if any process of the run is left. Part of scripts/soak.sh.
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

FAKETIME_LIB=$(faketime_library)
# Every process of the run names TAG on its command line: pg_autoctl and the postmasters name
# DIR, and the servers' other processes carry it as their cluster_name.
TAG=snowflake-failover
DIR=/var/tmp/$TAG
SOCK=/var/run/postgresql
as_user() { runuser -u postgres -- "$@"; }
run_user() { echo postgres; }
autoctl() { as_user env PGHOST="$SOCK" XDG_CONFIG_HOME="$DIR/config" XDG_DATA_HOME="$DIR/data" XDG_RUNTIME_DIR="$DIR/run" \
  PATH="$PG_BIN:$PATH" pg_autoctl "$@"; }
alive() {
  local s
  s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $s != Z* ]]
}
# Processes of the run: named by TAG, and pg_autoctl's own, whose titles drop the command line.
ours() { { pgrep -f -- "$TAG"; pgrep -u postgres -x pg_autoctl; } | sort -u || true; }
# Waits up to $1 seconds for "$2" to print nothing.
gone_within() {
  local i
  for i in $(seq 0 $(($1 * 10))); do
    [ -n "$($2)" ] || return 0
    sleep 0.1
  done
  return 1
}
autoctl_processes() { pgrep -u postgres -x pg_autoctl || true; }
defunct() { ps -u postgres -o stat=,pid= | awk '$1 ~ /^Z/ { print $2 }'; }

# Stops everything of the run (or of an earlier one) and fails if anything is left. The
# managers first: pg_autoctl starts again a server that stops under it, and ending its
# runuser wrapper does not end it.
stop_everything() {
  local d p
  for d in node2 node1 monitor; do
    [ -f "$DIR/$d/PG_VERSION" ] || continue
    autoctl stop --pgdata "$DIR/$d" >/dev/null 2>&1 || true
  done
  if ! gone_within 30 autoctl_processes; then
    for p in $(autoctl_processes); do
      log "pg_autoctl (PID $p) did not stop in 30 s: killing it"
      kill -KILL "$p" 2>/dev/null || true
    done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for d in monitor node1 node2; do
    [ -f "$DIR/$d/postmaster.pid" ] || continue
    p=$(head -1 "$DIR/$d/postmaster.pid")
    if alive "$p"; then
      log "stopping the server left in $DIR/$d"
      as_user "$PG_BIN/pg_ctl" -D "$DIR/$d" -m immediate stop >/dev/null 2>&1 ||
        kill -KILL "$p" 2>/dev/null || true
    fi
  done
  # A killed postmaster's processes end on their own once they notice. The servers end after
  # the pg_autoctl processes that started them, so init reaps them: give it a moment, lest
  # they show in ps as defunct (they have exited; nothing is left running).
  if gone_within 10 ours; then
    gone_within 10 defunct || log "exited servers not yet reaped by init: $(defunct | wc -l)"
    return 0
  fi
  report_left "the pg_auto_failover run" "$(ours)"
}
cleanup() { end_run $? "the pg_auto_failover run" "pg_auto_failover and its servers"; }

pids=()
stop_everything || die "could not stop an earlier run's processes"
rm -rf "$DIR"
mkdir -p "$DIR" "$SOCK"
mkdir -p "$DIR/run"
chown -R postgres: "$DIR"
trap cleanup EXIT
trap 'exit 130' INT TERM

PM=$(free_port 55430)
P1=$(free_port $((PM + 1)))
P2=$(free_port $((P1 + 1)))
log "pg_auto_failover monitor on port $PM"
autoctl create monitor --pgdata "$DIR/monitor" --pgport "$PM" --hostname localhost \
  --listen localhost --auth trust --no-ssl --pgctl "$PG_BIN/pg_ctl" >"$DIR/monitor.create.log" 2>&1 ||
  { cat "$DIR/monitor.create.log"; die "pg_autoctl create monitor failed"; }
echo "cluster_name = '$TAG-monitor'" | as_user tee -a "$DIR/monitor/postgresql.conf" >/dev/null
as_user "$PG_BIN/pg_ctl" -D "$DIR/monitor" -m fast stop >/dev/null 2>&1 || true
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
cluster_name = '$TAG'
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
# pgbench runs until the kill ends it: 20 s of load at least, and rows of it on node1 however
# slow the machine.
pgbench_run 1 600 &
load=$!
sleep 20
for i in $(seq 1 180); do
  [ "$(q "SELECT count(*) > 0 FROM ids WHERE era = 1")" = t ] && break
  [ "$i" -lt 180 ] || die "the load wrote nothing on node1 in 200 s"
  sleep 1
done
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
