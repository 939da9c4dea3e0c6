#!/usr/bin/env bash
# What lease mode costs per ID, in instructions, which a loaded machine cannot blur: a server
# in config mode and one leasing its shard from a one-member etcd, both run under valgrind's
# callgrind; on each, SELECT count(1) and SELECT count(snowflake()) over N and 2N rows, each in
# a session (a backend) of its own. The difference between the N and the 2N backend, over N,
# is the instructions per row without the session's start. Prints each mode's instructions per
# row for the floor and for snowflake(), their ratio, and etcd over config. Starts its own etcd
# and servers and stops them at the end. Takes a few minutes.
#   bench/lease_instructions.sh [--rows N]
source "$(dirname "$0")/../scripts/common.sh"

ROWS=200000
while [ $# -gt 0 ]; do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages valgrind curl etcd-server
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/lease-instructions
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR/out"
ETCD_PID=
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  sleep 2
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  [ -z "$ETCD_PID" ] || kill "$ETCD_PID" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop_all EXIT
start_etcd "$DIR" 23920

psql_on() { as_user "$PG_BIN/psql" -X -At -h "$DIR" -p "$1" -U postgres -d postgres "${@:2}"; }
declare -A PORT=([config]=$(free_port 55610) [etcd]=$(free_port 55620))
for mode in config etcd; do
  as_user "$PG_BIN/initdb" -D "$DIR/$mode" -U postgres -A trust --no-instructions >/dev/null
  {
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$DIR'"
    echo "port = ${PORT[$mode]}"
    echo "shared_preload_libraries = 'snowflake'"
    echo "snowflake.max_lead = '10s'"
    if [ "$mode" = config ]; then
      echo "snowflake.shard_id = 1"
    else
      echo "snowflake.shard_source = etcd"
      echo "snowflake.etcd_endpoints = 'http://127.0.0.1:$ETCD_PORT'"
    fi
  } | as_user tee -a "$DIR/$mode/postgresql.conf" >/dev/null
  # callgrind on the postmaster and every process it starts, one file each.
  "${EXEC_AS_USER[@]}" valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$DIR/out/$mode.%p" \
    "$PG_BIN/postgres" -D "$DIR/$mode" >"$DIR/$mode.log" 2>&1 &
  PIDS+=($!)
done
for mode in config etcd; do
  for _ in $(seq 1 300); do psql_on "${PORT[$mode]}" -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
  psql_on "${PORT[$mode]}" -q -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS snowflake'
done
for _ in $(seq 1 300); do
  [ "$(psql_on "${PORT[etcd]}" -c 'SELECT lease_state FROM snowflake_status()')" = held ] && break
  sleep 1
done
[ "$(psql_on "${PORT[etcd]}" -c 'SELECT lease_state FROM snowflake_status()')" = held ] ||
  die "the etcd-mode server holds no lease"

# The instructions of the backend that ran count($2) over $3 rows on $1's server.
instructions() {
  local mode=$1 expr=$2 rows=$3 pid f
  pid=$(psql_on "${PORT[$mode]}" -c 'SELECT pg_backend_pid()' \
    -c "SELECT count($expr) FROM generate_series(1, $rows)" | sed -n 1p)
  f=$DIR/out/$mode.$pid
  for _ in $(seq 1 100); do grep -q '^summary:' "$f" 2>/dev/null && break; sleep 0.2; done
  awk '/^summary:/ { print $2 }' "$f"
}
declare -A PER_ROW
for mode in config etcd; do
  for expr in 1 'snowflake()'; do
    small=$(instructions "$mode" "$expr" "$ROWS")
    large=$(instructions "$mode" "$expr" $((2 * ROWS)))
    PER_ROW[$mode,$expr]=$(echo "scale=1; ($large - $small) / $ROWS" | bc)
  done
done

echo "instructions per row (callgrind; the backend for 2N rows minus the one for N, over N = $ROWS), PostgreSQL $PG_MAJOR"
echo
echo "| mode | floor, count(1) | count(snowflake()) | snowflake() alone | × floor |"
echo "|---|---:|---:|---:|---:|"
for mode in config etcd; do
  f=${PER_ROW[$mode,1]} s=${PER_ROW[$mode,snowflake()]}
  echo "| $mode | $f | $s | $(echo "scale=1; $s - $f" | bc) | $(echo "scale=3; $s / $f" | bc) |"
done
echo
echo "etcd over config, per row: $(echo "scale=3; ${PER_ROW[etcd,snowflake()]} / ${PER_ROW[config,snowflake()]}" | bc)"
