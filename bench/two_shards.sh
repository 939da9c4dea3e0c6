#!/usr/bin/env bash
# sno(), rsxid() and ksuid() with two shards in use on one server (snowflake.shard_id set per
# role): calls a second of one client calling flat out, alone; beside a second client of the
# same role (one shard: the machine's cores are shared, the stream too); and beside a client of
# a role on another shard (two shards: the cores shared, each its own stream). The two-shard
# rate over the one-shard rate is what another shard costs a caller; over the rate alone, what
# it keeps of the machine. Each client is a pgbench client running SELECT <call> for --seconds,
# median of --runs; the longest call of any run is read from pgbench's per-call log.
# Writes bench/results/two_shards.md (or --out DIR). Builds and installs the extension, and
# runs a throwaway server (build/two-shards-bench) at default settings but for the shards.
#   bench/two_shards.sh [--seconds N] [--runs N] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

SECONDS_EACH=5
RUNS=3
OUT=$ROOT/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) SECONDS_EACH=1; RUNS=1; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages bc
installed_only
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/two-shards-bench
as_user rm -rf "$DIR"
start_server "$DIR" "${SNOWFLAKE_BENCH_PORT:-54373}" <<'CONF'
snowflake.shard_id = 1
CONF
trap stop_server EXIT
"${PSQL[@]}" -c 'SET client_min_messages = warning' -c 'DROP EXTENSION IF EXISTS snowflake CASCADE' \
  -c 'CREATE EXTENSION snowflake' -c 'DROP ROLE IF EXISTS app5' -c 'DROP ROLE IF EXISTS app6' \
  -c 'CREATE ROLE app5 LOGIN' -c 'CREATE ROLE app6 LOGIN' \
  -c 'ALTER ROLE app5 SET snowflake.shard_id = 5' -c 'ALTER ROLE app6 SET snowflake.shard_id = 6'

LOGS=$DIR/logs
as_user mkdir -p "$LOGS"
# Starts one pgbench client as role $1 running SELECT $2 for SECONDS_EACH s, its summary in
# $3.out and its per-call log under $3.
start_client() {
  as_user rm -f "$3".log.* "$3.out"
  echo "SELECT $2;" | as_user tee "$3.sql" >/dev/null
  as_user env -C "$LOGS" "$PG_BIN/pgbench" --no-vacuum --client=1 --jobs=1 --time="$SECONDS_EACH" \
    --log --log-prefix="$3.log" --file="$3.sql" -h "$SERVER_SOCK" -p "$SERVER_PORT" \
    -U "$1" postgres >"$3.out" 2>&1 &
}
tps() { sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$1.out" | head -n 1; }
# The longest call of a client's log, in ms (the third column is each call's latency in us).
longest() { awk '$3 > m { m = $3 } END { printf "%.1f", m / 1000 }' "$1".log.*; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
max() { printf '%s\n' "$@" | sort -g | tail -n 1; }
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }

table="| call | alone, calls/s | beside a client of its shard | beside a client of another shard | two shards ÷ one shard | two shards ÷ alone | longest call, ms |"$'\n'
table+="|---|---:|---:|---:|---:|---:|---:|"$'\n'
for call in 'rsxid()' 'ksuid()' 'sno(0)'; do
  alone=() same=() other=() long=()
  for _ in $(seq "$RUNS"); do
    start_client app5 "$call" "$LOGS/alone"
    wait
    alone+=("$(tps "$LOGS/alone")") long+=("$(longest "$LOGS/alone")")
    start_client app5 "$call" "$LOGS/same_a"
    start_client app5 "$call" "$LOGS/same_b"
    wait
    same+=("$(tps "$LOGS/same_a")" "$(tps "$LOGS/same_b")")
    long+=("$(longest "$LOGS/same_a")" "$(longest "$LOGS/same_b")")
    start_client app5 "$call" "$LOGS/other_5"
    start_client app6 "$call" "$LOGS/other_6"
    wait
    other+=("$(tps "$LOGS/other_5")" "$(tps "$LOGS/other_6")")
    long+=("$(longest "$LOGS/other_5")" "$(longest "$LOGS/other_6")")
  done
  a=$(median "${alone[@]}") s=$(median "${same[@]}") o=$(median "${other[@]}")
  for v in "$a" "$s" "$o"; do
    [ -n "$v" ] && [ "$(echo "$v > 0" | bc)" = 1 ] || die "a pgbench client made no call: see $LOGS/*.out"
  done
  table+="| \`$call\` | $(printf "%'.0f" "$a") | $(printf "%'.0f" "$s") | $(printf "%'.0f" "$o") | $(ratio "$o" "$s") | $(ratio "$o" "$a") | $(max "${long[@]}") |"$'\n'
done

mkdir -p "$OUT"
{
  echo "Two shards on one server: calls a second of one pgbench client, PostgreSQL $PG_MAJOR,"
  echo "$(nproc) cores, median of $RUNS runs of ${SECONDS_EACH} s (beside another client: the median of both)"
  echo
  printf '%s' "$table"
} | tee "$OUT/two_shards.md"
