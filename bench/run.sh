#!/usr/bin/env bash
# Builds and installs the extension, starts a throwaway server (build/bench) and runs the
# benchmark in bench/bench.py against it: Markdown tables and PNG plots go to bench/results
# (or --out DIR). Arguments go to bench.py (--help lists them; --quick is a tiny run).
source "$(dirname "$0")/../scripts/common.sh"

install_packages python3 python3-psycopg2 gnuplot-nox fonts-dejavu-core
installed_only
ensure_server_user
prepare_work
build_and_install

start_server "$WORK/bench" "${SNOWFLAKE_BENCH_PORT:-54339}" <<'CONF'
shared_buffers = '1GB'
max_connections = 50
synchronous_commit = off
max_wal_size = '8GB'
checkpoint_timeout = '30min'

CONF
trap stop_server EXIT

# bench.py runs as the server's user, in a folder of its own; the results come back here.
OUT=$ROOT/bench/results
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --out=*) OUT=${1#--out=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
as_user make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" bench/core_costs
as_user rm -rf "$WORK/bench/results"
as_user env PGHOST="$SERVER_SOCK" PGPORT="$SERVER_PORT" PGUSER=postgres PGDATABASE=postgres \
  PATH="$PG_BIN:$PATH" python3 "$WORK/tree/bench/bench.py" --out "$WORK/bench/results" \
  --core-costs "$WORK/tree/bench/core_costs" \
  ${args[@]+"${args[@]}"}
mkdir -p "$OUT"
cp "$WORK"/bench/results/* "$OUT"/
log "results in $OUT"
