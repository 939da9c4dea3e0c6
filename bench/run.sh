#!/usr/bin/env bash
# Builds and installs the extension, starts a throwaway server (build/bench) and runs the
# benchmark in bench/bench.py against it. Arguments go to bench.py (--help lists them).
source "$(dirname "$0")/../scripts/common.sh"

install_packages python3 python3-psycopg2
ensure_server_user
prepare_work
build_and_install

start_server "$WORK/bench" "${SNOWFLAKE_BENCH_PORT:-54339}" <<'CONF'
shared_buffers = '512MB'
max_connections = 50
synchronous_commit = off
CONF
trap stop_server EXIT

as_user env PGHOST="$SERVER_SOCK" PGPORT="$SERVER_PORT" PGUSER=postgres PGDATABASE=postgres \
  PATH="$PG_BIN:$PATH" python3 "$WORK/tree/bench/bench.py" "$@"
