#!/usr/bin/env bash
# What lease mode costs: snowflake() per ID on a server whose shard is snowflake.shard_id
# (config) and on one whose shard is leased from etcd (etcd), side by side in one run, with
# the executor's floor (count(1)) on each; each round runs the four in turn, and the table
# gives the best round and the median of the rounds' ratios of etcd to config. Then the etcd
# requests one server makes per second, idle and while generating (snowflake_status()'s
# etcd_requests over --window seconds). Starts its own one-member etcd and two throwaway
# servers, and stops them at the end. Writes bench/results/lease.md (or --out DIR).
#   bench/lease.sh [--runs N] [--rows N] [--window S] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

RUNS=9
# One shard issues 1,024 IDs a millisecond: a million run about a second ahead of the clock,
# within max_lead (2 s here), so that the statement measures generation, not waits for the clock.
ROWS=1000000
WINDOW=60
OUT=$ROOT/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --window) WINDOW=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) RUNS=2; ROWS=200000; WINDOW=5; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages bc curl etcd-server
installed_only
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/lease-bench
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR"

CONFIG_PSQL=() ETCD_PSQL=() CONFIG_DATA= ETCD_DATA=
stop_all() {
  [ -z "$CONFIG_DATA" ] || as_user "$PG_BIN/pg_ctl" -D "$CONFIG_DATA" -m fast stop >/dev/null 2>&1 || true
  [ -z "$ETCD_DATA" ] || as_user "$PG_BIN/pg_ctl" -D "$ETCD_DATA" -m fast stop >/dev/null 2>&1 || true
  [ -z "$ETCD_PID" ] || kill "$ETCD_PID" 2>/dev/null || true
  wait 2>/dev/null || true
}
ETCD_PID=
trap stop_all EXIT
start_etcd "$DIR" 23790

start_server "$DIR/config" "${SNOWFLAKE_BENCH_PORT:-54371}" <<'CONF'
snowflake.shard_id = 1
snowflake.max_lead = '2s'
CONF
CONFIG_PSQL=("${PSQL[@]}") CONFIG_DATA=$SERVER_DATA
start_server "$DIR/etcd-mode" "$((${SNOWFLAKE_BENCH_PORT:-54371} + 1))" <<CONF
snowflake.shard_source = etcd
snowflake.etcd_endpoints = 'http://127.0.0.1:$ETCD_PORT'
snowflake.max_lead = '2s'
CONF
ETCD_PSQL=("${PSQL[@]}") ETCD_DATA=$SERVER_DATA

cq() { as_user "${CONFIG_PSQL[@]}" -At -c "$1"; }
eq() { as_user "${ETCD_PSQL[@]}" -At -c "$1"; }
cq "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS snowflake"
eq "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS snowflake"
for _ in $(seq 1 300); do
  [ "$(eq "SELECT lease_state FROM snowflake_status()")" = held ] && break
  sleep 0.1
done
[ "$(eq "SELECT lease_state FROM snowflake_status()")" = held ] ||
  die "the etcd-mode server holds no lease: $(eq "SELECT etcd_error FROM snowflake_status()")"

# Seconds for count($2) over ROWS rows on the server $1 (config or etcd), by psql's \timing:
# the statement's round trip, without the connection's start.
timed() {
  local -n psql_cmd=${1^^}_PSQL
  as_user "${psql_cmd[@]}" -At -c '\timing on' \
    -c "SELECT count($2) FROM generate_series(1, $ROWS)" |
    awk '/^Time: / { printf "%.6f\n", $2 / 1000 }'
}
# A batch on one shard runs ahead of the clock: wait until both servers' IDs are back with it.
settle() {
  local i
  for i in $(seq 1 300); do
    [ "$(cq "SELECT coalesce(max(lead_ms), 0) <= 0 FROM snowflake_streams()")" = t ] &&
      [ "$(eq "SELECT coalesce(max(lead_ms), 0) <= 0 FROM snowflake_streams()")" = t ] && return 0
    sleep 0.1
  done
}
best() { printf '%s\n' "$@" | sort -g | head -n 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

config=() etcd=() cfloor=() efloor=() ratios=()
for run in $(seq "$RUNS"); do
  settle
  # The order alternates, so that neither mode always runs first in a round.
  if [ $((run % 2)) = 1 ]; then
    c=$(timed config 'snowflake()'); settle; e=$(timed etcd 'snowflake()')
  else
    e=$(timed etcd 'snowflake()'); settle; c=$(timed config 'snowflake()')
  fi
  config+=("$c") etcd+=("$e")
  cfloor+=("$(timed config 1)") efloor+=("$(timed etcd 1)")
  ratios+=("$(echo "scale=4; $e / $c" | bc)")
  log "round $run: config $c s, etcd $e s"
done
ns() { echo "scale=1; $1 * 1000000000 / $ROWS" | bc; }
bc_=$(best "${config[@]}") be=$(best "${etcd[@]}") bcf=$(best "${cfloor[@]}") bef=$(best "${efloor[@]}")

# etcd requests per second: idle, then while one session generates.
rate() {
  local before after
  before=$(eq "SELECT etcd_requests FROM snowflake_status()")
  sleep "$WINDOW"
  after=$(eq "SELECT etcd_requests FROM snowflake_status()")
  echo "scale=2; ($after - $before) / $WINDOW" | bc
}
idle=$(rate)
as_user "${ETCD_PSQL[@]}" -At -c "SELECT count(snowflake()) FROM generate_series(1, 1000000000)" \
  >/dev/null 2>&1 &
load=$!
busy=$(rate)
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true
cq "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT count(snowflake())%'" >/dev/null || true
eq "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT count(snowflake())%'" >/dev/null || true

mkdir -p "$OUT"
{
  echo "snowflake() in config and lease (etcd) mode, side by side: PostgreSQL $PG_MAJOR, $(nproc) cores,"
  echo "$(printf "%'d" "$ROWS") IDs per statement, $RUNS rounds; etcd $(etcd --version 2>/dev/null | head -n 1 | awk '{ print $3 }'), one member on loopback"
  echo
  echo "| mode | snowflake(), ns per ID (best) | floor, ns per ID (best) | × floor |"
  echo "|---|---:|---:|---:|"
  echo "| config | $(ns "$bc_") | $(ns "$bcf") | $(echo "scale=2; $bc_ / $bcf" | bc) |"
  echo "| etcd | $(ns "$be") | $(ns "$bef") | $(echo "scale=2; $be / $bef" | bc) |"
  echo
  echo "etcd over config: best $(echo "scale=3; $be / $bc_" | bc), median of the rounds $(median "${ratios[@]}")"
  echo "(rounds: $(printf '%s ' "${ratios[@]}"))"
  echo
  echo "etcd requests per second of one server (lease_renew 10s, the defaults), over $WINDOW s:"
  echo "$idle idle, $busy while one session generates"
} | tee "$OUT/lease.md"
log "results in $OUT/lease.md"
