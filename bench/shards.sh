#!/usr/bin/env bash
# The cost of snowflake() per ID as batches and sessions grow, on one shard and on a range
# of shards (snowflake.shard_count): a shard holds 1,024 IDs per millisecond, so past the
# first second of IDs a batch on one shard waits for the clock, and a range does not.
# For each count (1, then 8; --counts), each row runs SELECT count(snowflake()) FROM
# generate_series(1, N) in S sessions at once, and the same with count(1) (the executor's
# floor), best of --runs; it prints ns per ID (the slowest session's time over N) and the
# ratio to the floor. Writes bench/results/shards.md and shards.png (or --out DIR).
# Builds and installs the extension, and runs a throwaway server (build/shards-bench).
#   bench/shards.sh [--runs N] [--counts "1 8"] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

RUNS=3
COUNTS="1 8"
OUT=$ROOT/bench/results
# batch:sessions
ROWS="1000000:1 3000000:1 10000000:1 5000000:1 5000000:2 5000000:4"
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --counts) COUNTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) RUNS=1; ROWS="100000:1 100000:2"; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages bc gnuplot-nox fonts-dejavu-core
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/shards-bench
as_user rm -rf "$DIR"
start_server "$DIR" "${SNOWFLAKE_BENCH_PORT:-54369}" <<'CONF'
max_connections = 20
snowflake.shard_id = 16
CONF
trap stop_server EXIT
q() { as_user "${PSQL[@]}" -At -c "$1"; }
q "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS snowflake"

# Seconds until every one of $2 sessions has run count($1) over $3 rows, started together.
parallel() {
  local expr=$1 sessions=$2 rows=$3 t0 t1 i pids=()
  t0=$(date +%s.%N)
  for i in $(seq "$sessions"); do
    as_user "${PSQL[@]}" -At -c "SELECT count($expr) FROM generate_series(1, $rows)" >/dev/null &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
best() { printf '%s\n' "$@" | sort -g | head -n 1; }
# Waits until the IDs' time is back with the clock (a batch on one shard runs ahead of it).
settle() {
  local i
  for i in $(seq 1 200); do
    [ "$(q "SELECT coalesce(max(lead_ms), 0) <= 0 FROM snowflake_streams()")" = t ] && return 0
    sleep 0.1
  done
}

table="| shards | IDs per session | sessions | snowflake(), ns per ID | floor, ns per ID | × floor |"$'\n'
table+="|---|---|---|---|---|---|"$'\n'
data=$(mktemp -d)
for count in $COUNTS; do
  as_user tee -a "$SERVER_DATA/postgresql.auto.conf" >/dev/null <<<"snowflake.shard_count = $count"
  as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -l "$DIR/server.log" -w restart >/dev/null
  for row in $ROWS; do
    rows=${row%%:*}
    sessions=${row##*:}
    ids=() floor=()
    for _ in $(seq "$RUNS"); do
      settle
      ids+=("$(parallel 'snowflake()' "$sessions" "$rows")")
      floor+=("$(parallel 1 "$sessions" "$rows")")
    done
    i=$(best "${ids[@]}")
    f=$(best "${floor[@]}")
    ns_i=$(echo "scale=1; $i * 1000000000 / $rows" | bc)
    ns_f=$(echo "scale=1; $f * 1000000000 / $rows" | bc)
    ratio=$(echo "scale=2; $i / $f" | bc)
    table+="| $count | $(printf "%'d" "$rows") | $sessions | $ns_i | $ns_f | $ratio |"$'\n'
    echo "\"$(echo "scale=1; $rows / 1000000" | bc)M x$sessions\" $ratio" >>"$data/$count"
  done
done

mkdir -p "$OUT"
{
  echo "snowflake() per ID by batch and sessions, PostgreSQL $PG_MAJOR, $(nproc) cores, best of $RUNS"
  echo
  printf '%s' "$table"
} | tee "$OUT/shards.md"

# One line per count: the ratio to the floor for each batch and session count.
script=$(mktemp)
{
  echo "set terminal pngcairo size 800,450 font 'DejaVu Sans,10'"
  echo "set output '$OUT/shards.png'"
  echo "set title 'snowflake() per ID as a multiple of the executor floor (PostgreSQL $PG_MAJOR)'"
  echo "set ylabel '× floor'"
  echo "set xlabel 'IDs per session × sessions'"
  echo "set key top left"
  echo "set grid ytics"
  echo "set yrange [0:*]"
  echo "set style data linespoints"
  printf 'plot '
  sep=''
  for count in $COUNTS; do
    label="1 shard"
    [ "$count" = 1 ] || label="$count shards"
    printf "%s'%s' using 0:2:xtic(1) title '%s' lw 2" "$sep" "$data/$count" "$label"
    sep=', '
  done
  echo
} >"$script"
gnuplot "$script" 2>/dev/null || log "gnuplot failed: no plot"
rm -rf "$script" "$data"
log "results in $OUT/shards.md and $OUT/shards.png"
