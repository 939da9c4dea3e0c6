#!/usr/bin/env bash
# Failover under Patroni (Debian's patroni and etcd-server): one etcd member and two Patroni
# nodes on loopback, with the extension preloaded and both nodes on snowflake.shard_id 3.
# pgbench inserts IDs of every kind into the leader, shard 9 runs ahead of the clock, and
# a probe inserts one row at a time to time the outage. Then the leader's postmaster is
# killed; Patroni promotes the replica, whose PostgreSQL runs with its clock 10 minutes
# behind (libfaketime), and the load follows it through a connection string listing both
# nodes with target_session_attrs=read-write. Every ID must be distinct, and every ID of each kind
# issued after the failover above every one issued before it: the script prints both counts
# and how long snowflake() was unavailable, and fails unless both counts are 0. At the end
# Patroni and etcd are stopped first (Patroni would restart a server stopped under it), then
# any server left, and the script fails if any process of the run is left. Part of
# scripts/soak.sh.
#
# With --lease, both nodes lease their shard from Patroni's own etcd instead
# (snowflake.shard_source = etcd, one configuration): the promoted node leases one at once,
# while the killed leader's lease still runs out, so it takes another shard; the checks are
# then per shard, and shard 9 is not used.
#
# Needs root to install packages and to run everything as the unprivileged SERVER_USER.
# Servers, Patroni's REST API and etcd listen on 127.0.0.1 only, on private ports.
source "$(dirname "$0")/common.sh"

[ "$PG_MAJOR" = 15 ] || die "this run is set up for PostgreSQL 15"
[ "$(id -u)" = 0 ] || die "run as root: it installs packages and runs the servers as $SERVER_USER"
install_packages patroni etcd-server libfaketime curl
ensure_server_user
prepare_work
build_and_install

LEASE=
[ "${1:-}" != --lease ] || LEASE=1
BEFORE=${PATRONI_SOAK_BEFORE:-20}  # seconds of load before the kill (at least: and every kind written)
AFTER=${PATRONI_SOAK_AFTER:-20}    # and after the promotion (at least: and node2 written to)
# Every process of the run names TAG on its command line: Patroni, etcd and the postmasters
# name DIR, and the servers' other processes carry cluster_name, which Patroni sets to the
# scope.
TAG=snowflake-patroni
DIR=/var/tmp/$TAG
SCOPE=$TAG
CONN_OPTS="user=postgres dbname=postgres connect_timeout=2"
started_at=$SECONDS

FAKETIME_LIB=$(faketime_library)

# Runs a command as SERVER_USER in place: setpriv execs where runuser forks and waits, so the
# PID of a background job is the command's own and a signal sent to it reaches it.
# (A function run in the background is a subshell of its own: start those with the array.)
AS_SERVER=(setpriv --reuid="$SERVER_USER" --regid="$SERVER_USER" --init-groups --
  env HOME="$DIR" USER="$SERVER_USER" LOGNAME="$SERVER_USER")
as_server() { "${AS_SERVER[@]}" "$@"; }
alive() {
  local s
  s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $s != Z* ]]
}
# Waits up to $1 seconds for the given PIDs to end; fails if one is left.
await_pids() {
  local grace=$1 i p left
  shift
  for i in $(seq 0 $((grace * 10))); do
    left=
    for p; do if alive "$p"; then left=1; fi; done
    [ -n "$left" ] || return 0
    sleep 0.1
  done
  return 1
}
# SIGTERM to the given PIDs, up to $1 seconds for them to end, then SIGKILL.
stop_pids() {
  local grace=$1 p
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  # (wait reaps those that are this shell's children, which would otherwise show as zombies.)
  if await_pids "$grace" "$@"; then wait "$@" 2>/dev/null || true; return 0; fi
  for p; do
    if alive "$p"; then
      log "PID $p did not end in $grace s: killing it"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
}
ours() { pgrep -f -- "$TAG" || true; }
http_ok() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1")" = 200 ]; }

load_pids=()
patroni_pids=()
rest_ports=()
etcd_pid=
# Stops everything of the run (or of an earlier one), managers first, and fails if anything
# is left.
stop_everything() {
  local d p left i
  mkdir -p "$DIR" && touch "$DIR/stop"
  stop_pids 15 "${load_pids[@]}"
  # The replicas' Patroni before the leader's, so that none takes over; Patroni stops its
  # server (fast) when it ends.
  local replicas=() leaders=()
  for i in "${!patroni_pids[@]}"; do
    if http_ok "http://127.0.0.1:${rest_ports[i]}/primary"; then
      leaders+=("${patroni_pids[i]}")
    else
      replicas+=("${patroni_pids[i]}")
    fi
  done
  for p in "${replicas[@]}" "${leaders[@]}" $(pgrep -f -- "patroni $DIR/" || true); do
    stop_pids 60 "$p"
  done
  stop_pids 20 $etcd_pid $(pgrep -f -- "etcd .*--data-dir $DIR/" || true)
  for d in "$DIR"/node*/data; do
    [ -f "$d/postmaster.pid" ] || continue
    p=$(head -1 "$d/postmaster.pid")
    if alive "$p"; then
      log "stopping the server left in $d"
      as_server "$PG_BIN/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1 || stop_pids 10 "$p"
    fi
  done
  # A killed postmaster's processes end on their own once they notice.
  for i in $(seq 1 100); do
    left=$(ours)
    [ -n "$left" ] || return 0
    sleep 0.1
  done
  report_left "the Patroni run" "$left"
}
cleanup() { end_run $? "the Patroni run" "Patroni, etcd and the servers"; }

stop_everything || die "could not stop an earlier run's processes"
rm -rf "$DIR"
mkdir -p "$DIR"
chown "$SERVER_USER:" "$DIR"
trap cleanup EXIT
trap 'exit 130' INT TERM

ETCD_CLIENT=$(free_port 55540)
ETCD_PEER=$(free_port $((ETCD_CLIENT + 1)))
P1=$(free_port $((ETCD_PEER + 1)))
P2=$(free_port $((P1 + 1)))
R1=$(free_port $((P2 + 1)))
R2=$(free_port $((R1 + 1)))

log "etcd on 127.0.0.1:$ETCD_CLIENT"
"${AS_SERVER[@]}" etcd --name "$TAG" --data-dir "$DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-cluster "$TAG=http://127.0.0.1:$ETCD_PEER" --initial-cluster-state new \
  >"$DIR/etcd.log" 2>&1 &
etcd_pid=$!

# Polls "$@" every half second for up to $2 seconds.
wait_for() {
  local what=$1 seconds=$2 i
  shift 2
  for i in $(seq 1 $((seconds * 2))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "timed out after $seconds s waiting for $what"
}
wait_for "etcd" 30 curl -sf --max-time 2 "http://127.0.0.1:$ETCD_CLIENT/health"

# A node's configuration. primary_start_timeout 0: a leader whose server crashed fails over
# at once instead of restarting it (Patroni's default waits 300 s for the crashed primary).
# maximum_lag_on_failover is large because the replica lags under this load, and the test is
# about IDs after a failover, whatever it lost. Both nodes run shard 3.
shard_parameters() {
  if [ -n "$LEASE" ]; then
    cat <<YAML
    snowflake.shard_source: etcd
    snowflake.etcd_endpoints: http://127.0.0.1:$ETCD_CLIENT
    snowflake.etcd_prefix: /snowflake/$SCOPE
    snowflake.shard_pool: 0-15
YAML
  else
    echo "    snowflake.shard_id: 3"
  fi
}
node_config() {
  local name=$1 port=$2 rest=$3 bin=$4
  cat <<YAML
scope: $SCOPE
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 5
    maximum_lag_on_failover: 1073741824
    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: true
      use_slots: true
  initdb:
  - username: postgres
  - encoding: UTF8
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $DIR/$name/data
  bin_dir: $bin
  pgpass: $DIR/$name/pgpass
  use_unix_socket: true
  authentication:
    superuser:
      username: postgres
    replication:
      username: replicator
  pg_hba:
  - local all all trust
  - local replication all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: $DIR/$name/sock
    shared_preload_libraries: snowflake
$(shard_parameters)
    snowflake.max_lead: 10s
watchdog:
  mode: "off"
YAML
}

start_node() {
  local name=$1 port=$2 rest=$3 bin=$4
  log "Patroni node $name: PostgreSQL on 127.0.0.1:$port, REST API on 127.0.0.1:$rest"
  as_server mkdir -p "$DIR/$name/sock"
  node_config "$name" "$port" "$rest" "$bin" | as_server tee "$DIR/$name.yml" >/dev/null
  "${AS_SERVER[@]}" patroni "$DIR/$name.yml" >"$DIR/$name.log" 2>&1 &
  patroni_pids+=($!)
  rest_ports+=("$rest")
}
q() { as_server "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
CONN="host=127.0.0.1,127.0.0.1 port=$P1,$P2 $CONN_OPTS target_session_attrs=read-write"
patronictl_list() { as_server patronictl -c "$DIR/node1.yml" list 2>/dev/null || true; }

start_node node1 "$P1" "$R1" "$PG_BIN"
wait_for "node1 to lead" 120 http_ok "http://127.0.0.1:$R1/primary"
q "$CONN" "CREATE EXTENSION snowflake;
  CREATE TABLE ids (n bigserial, node int DEFAULT inet_server_port(), src text,
    sf bigint DEFAULT snowflake(), v7 uuid DEFAULT snowflake_uuidv7(), ul ulid DEFAULT ulid());"

# The replica, its PostgreSQL's clock 10 minutes behind. Not Patroni's: under libfaketime
# with DONT_FAKE_MONOTONIC, Python's time.sleep() fails with EINVAL (libfaketime 0.9.10's
# clock_nanosleep), which breaks Patroni's promote and stop. So node2's bin_dir holds links to
# PostgreSQL's programs, and in place of postgres a script that runs it under libfaketime.
as_server mkdir -p "$DIR/node2/bin"
for f in "$PG_BIN"/*; do as_server ln -s "$f" "$DIR/node2/bin/"; done
as_server rm "$DIR/node2/bin/postgres"
as_server tee "$DIR/node2/bin/postgres" >/dev/null <<SH
#!/bin/sh
LD_PRELOAD=$FAKETIME_LIB FAKETIME=-600s DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \\
  exec $PG_BIN/postgres "\$@"
SH
chmod +x "$DIR/node2/bin/postgres"
start_node node2 "$P2" "$R2" "$DIR/node2/bin"
wait_for "node2 to replicate" 180 http_ok "http://127.0.0.1:$R2/replica"
streaming() {
  [ "$(q "host=127.0.0.1 port=$P1 $CONN_OPTS" \
    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ]
}
wait_for "node2 to stream" 60 streaming
behind=$(( $(date +%s) - $(q "host=127.0.0.1 port=$P2 $CONN_OPTS" \
  "SELECT round(extract(epoch FROM clock_timestamp()))") ))
log "node2's PostgreSQL sees its clock $behind s behind"
[ "$behind" -gt 500 ] || die "node2's clock is not behind: the run would prove nothing"
patronictl_list

# The load: pgbench in 5 s runs until told to stop. When the leader dies its clients abort
# and pgbench ends; the next run connects to whichever node is read-write.
cat >"$DIR/load.sql" <<'SQL'
INSERT INTO ids (src) SELECT 'pgbench' FROM generate_series(1, 1000);
INSERT INTO ids (src, sf, v7, ul) SELECT 'ahead', snowflake(9), NULL, NULL FROM generate_series(1, 10000);
SQL
# In lease mode a server issues on its leased shard only: the burst ahead uses it too.
[ -z "$LEASE" ] || sed -i 's/snowflake(9)/snowflake()/' "$DIR/load.sql"
# The probe: one snowflake() row per statement, and the client's time of each that
# succeeded with the port of the server that took it. The client's clock, not the server's
# clock_timestamp(): node2's clock runs 10 minutes behind.
cat >"$DIR/probe.sh" <<'SH'
export LC_ALL=C
conn=$1 stop=$2 deadline=$3
while [ ! -e "$stop" ] && [ "$EPOCHSECONDS" -lt "$deadline" ]; do
  if node=$("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$conn" \
      -c "INSERT INTO ids (src) VALUES ('probe') RETURNING node" 2>>"${stop%/*}/probe.err"); then
    echo "$EPOCHREALTIME $node"
  else
    sleep 0.05
  fi
done
SH
cat >"$DIR/pgbench.sh" <<'SH'
conn=$1 stop=$2 deadline=$3
trap 'kill $child 2>/dev/null; exit 0' TERM
while [ ! -e "$stop" ] && [ "$EPOCHSECONDS" -lt "$deadline" ]; do
  "$PG_BIN/pgbench" -n -c 4 -j 2 -T 5 -f "${stop%/*}/load.sql" "$conn" &
  child=$!
  wait $child || sleep 0.2
done
SH
chown "$SERVER_USER:" "$DIR"/*.sql "$DIR"/*.sh
rm -f "$DIR/stop"
# (Past every wait below: the load, the kill, the promotion, the load on node2, and a margin.)
deadline=$(( $(date +%s) + BEFORE + 180 + 120 + AFTER + 180 + 30 ))
log "load on node1 for $BEFORE s, then its postmaster is killed"
"${AS_SERVER[@]}" PG_BIN="$PG_BIN" bash "$DIR/probe.sh" "$CONN" "$DIR/stop" "$deadline" >"$DIR/probe.log" &
load_pids+=($!)
"${AS_SERVER[@]}" PG_BIN="$PG_BIN" bash "$DIR/pgbench.sh" "$CONN" "$DIR/stop" "$deadline" >"$DIR/pgbench.log" 2>&1 &
load_pids+=($!)
sleep "$BEFORE"
# However slow the machine, the load has written every kind on node1 before the kill.
node1_written() {
  [ "$(q "host=127.0.0.1 port=$P1 $CONN_OPTS" "SELECT count(*) FILTER (WHERE src = 'pgbench' AND sf IS NOT NULL) > 0
    AND count(*) FILTER (WHERE src = 'ahead') > 0 AND count(v7) > 0 AND count(ul) > 0 FROM ids")" = t ]
}
wait_for "the load to write every kind on node1" 180 node1_written

http_ok "http://127.0.0.1:$R1/primary" || die "node1 is no longer the leader before the kill"
primary_pid=$(head -1 "$DIR/node1/data/postmaster.pid")
log "killing node1's postmaster ($primary_pid)"
killed_at=$EPOCHREALTIME
kill -9 "$primary_pid"
wait_for "node2 to be promoted" 120 http_ok "http://127.0.0.1:$R2/primary"
log "Patroni promoted node2 $(awk -v a="$killed_at" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s after the kill"
sleep "$AFTER"
# And the load and the probe have written on node2 before they stop.
node2_written() {
  [ "$(q "host=127.0.0.1 port=$P2 $CONN_OPTS" "SELECT count(*) FILTER (WHERE node = $P2 AND src = 'ahead') > 0
    AND count(*) FILTER (WHERE node = $P2 AND src = 'probe') > 0 FROM ids")" = t ]
}
wait_for "the load and the probe to write on node2" 180 node2_written
touch "$DIR/stop"
# pgbench ends its 5 s run, the probe its statement.
await_pids 10 "${load_pids[@]}" || true
stop_pids 5 "${load_pids[@]}"
load_pids=()
patronictl_list

# The probe's outage: from its last insert on node1 to its first on node2.
read -r probe_p1 probe_p2 gap < <(awk -v p1="$P1" -v p2="$P2" '
  $2 == p1 && !first { last = $1; n1++ }
  $2 == p2 { if (!first) first = $1; n2++ }
  END { printf "%d %d %.3f\n", n1, n2, (first && last) ? first - last : -1 }' "$DIR/probe.log")
transactions=$(awk '/number of transactions actually processed/ { n += $NF } END { print n + 0 }' \
  "$DIR/pgbench.log")

# The shards node1 issued on: 3 and 9, or in lease mode the one it leased (twice).
SHARD=3 AHEAD=9
if [ -n "$LEASE" ]; then
  SHARD=$(q "$CONN" "SELECT snowflake_shard(sf) FROM ids WHERE node = $P1 AND sf IS NOT NULL LIMIT 1")
  AHEAD=$SHARD
  node2_shard=$(q "$CONN" "SELECT lease_shard FROM snowflake_status()")
  log "node1 leased shard $SHARD; node2, promoted, leased shard $node2_shard"
fi
log "counting"
result=$(q "$CONN" "SET work_mem = '256MB';
  WITH top AS (SELECT max(sf) FILTER (WHERE snowflake_shard(sf) = $SHARD) AS top_sf3,
                      max(sf) FILTER (WHERE snowflake_shard(sf) = $AHEAD) AS top_sf9,
                      max(v7::text)::uuid AS top_v7, max(ul) AS top_ul
                 FROM ids WHERE node = $P1),
       -- node2's IDs on a shard node1 issued on (in lease mode: none, unless it took node1's)
       shard_top AS (SELECT snowflake_shard(sf) AS shard, max(sf) AS top FROM ids
                      WHERE node = $P1 AND sf IS NOT NULL GROUP BY 1)
  SELECT count(*), count(*) FILTER (WHERE node = $P1), count(*) FILTER (WHERE node = $P2),
         count(*) FILTER (WHERE node = $P2 AND src = 'ahead'),
         count(*) FILTER (WHERE node = $P2 AND sf <= (SELECT top FROM shard_top
                                                        WHERE shard = snowflake_shard(ids.sf))
                                 AND src <> 'ahead'),
         count(*) FILTER (WHERE node = $P2 AND src = 'ahead' AND sf <= (SELECT top FROM shard_top
                                                        WHERE shard = snowflake_shard(ids.sf))),
         count(*) FILTER (WHERE node = $P2 AND v7 <= top_v7),
         count(*) FILTER (WHERE node = $P2 AND ul <= top_ul),
         count(*) FILTER (WHERE node = $P1 AND src = 'probe'),
         max((top_sf3 IS NULL OR top_sf9 IS NULL OR top_v7 IS NULL OR top_ul IS NULL)::int)
    FROM ids, top;
  SELECT count(sf) - count(DISTINCT sf) FROM ids;
  SELECT count(v7) - count(DISTINCT v7) FROM ids;
  SELECT count(ul) - count(DISTINCT ul) FROM ids;" | tr '\n' '|')
IFS='|' read -r rows before after after9 low_sf low_sf9 low_v7 low_ul probe_kept no_top dup_sf dup_v7 \
  dup_ul <<<"$result"
dups=$((dup_sf + dup_v7 + dup_ul))
lower=$((low_sf + low_sf9 + low_v7 + low_ul))
echo "failover under Patroni: $rows rows ($before before the failover, $after after;" \
  "$transactions pgbench transactions)"
echo "  duplicate IDs: $dups (snowflake() $dup_sf, snowflake_uuidv7() $dup_v7, ulid() $dup_ul)"
echo "  IDs after the failover at or below one of the same shard before it: $lower (snowflake() $low_sf," \
  "the burst ahead of the clock $low_sf9, snowflake_uuidv7() $low_v7, ulid() $low_ul)"
echo "  snowflake() unavailable for $gap s (the probe's last insert on node1 to its first on" \
  "node2; $probe_p1 probe inserts before, $probe_p2 after)"
echo "  probe inserts acknowledged by node1 but not replicated before the kill: $((probe_p1 - probe_kept))"
echo "  took $((SECONDS - started_at)) s"
[ "$no_top" = 0 ] && [ "$after" -gt 0 ] && [ "$after9" -gt 0 ] && [ "$probe_p2" -gt 0 ] ||
  die "the load did not run on both sides of the failover"
[ "$dups" = 0 ] && [ "$lower" = 0 ]
