#!/usr/bin/env bash
# ID blocks from a client, in one run on one server: rows a second inserting 1,000,000
# parents and 3,000,000 children with keys from blocks of 1,000 (COPY), against DEFAULT
# snowflake() with RETURNING and bigserial with RETURNING; what snowflake_block(10) costs
# against one snowflake() call, in the server and as a round trip; and blocks of 1,000 taken
# back to back, sustained, against the capacity rule (bench/blocks.py); and the keys for the
# parents and children handed out by each language's allocator (scripts/clients.sh installs the
# Python and JavaScript packages and builds the Go and Java ones).
# Builds and installs the extension, and runs a throwaway server (build/blocks-bench).
# Writes bench/results/blocks.md (or --out DIR).
#   bench/blocks.sh [--parents N] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

PARENTS=1000000
CALLS=20000
RUNS=5
OUT=$ROOT/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --parents) PARENTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) PARENTS=5000; CALLS=2000; RUNS=1; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

source "$ROOT/scripts/clients.sh"

install_packages python3 python3-psycopg2 "${client_packages[@]}"
installed_only
ensure_server_user
prepare_work
build_and_install
npm_ci_drivers
install_python_client
build_goblocks
build_java_blocks

DIR=$WORK/blocks-bench
as_user rm -rf "$DIR"
# Default snowflake settings: a shard mints 1,024 IDs a millisecond, and blocks are measured
# at the rate that allows (the cost of a call with blocks of 10, the sustained rate of blocks
# of 1,000).
start_server "$DIR" "${SNOWFLAKE_BENCH_PORT:-54391}" tcp <<'CONF'
shared_buffers = '1GB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'
synchronous_commit = off
max_parallel_workers_per_gather = 0
jit = off
snowflake.shard_id = 1
CONF
trap stop_server EXIT
as_user "${PSQL[@]}" -At -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS snowflake"

as_user mkdir -p "$DIR/results"
client() {
  as_user env -C "$WORK/tree/test/drivers" PGHOST="$SERVER_SOCK" PGPORT="$SERVER_PORT" \
    PGUSER=postgres PGDATABASE=postgres "$@"
}
{
  client "$CLIENT_PYTHON" ../../bench/blocks.py --parents "$PARENTS" --calls "$CALLS" --runs "$RUNS"
  # Keys for the parents and children through each allocator, handed out without inserting:
  # 8 threads (or callers) sharing one allocator of blocks of 1,000, asking for 4,000 at a time.
  KEYS=$((PARENTS * 4))
  echo
  echo "Keys for $PARENTS parents and $((PARENTS * 3)) children through each allocator, handed out"
  echo "without inserting: one allocator (blocks of 1,000, or of what a request needs beyond that)"
  echo "shared by 8 threads or callers, each asking for a batch's 4,000 keys at a time:"
  echo
  echo "| allocator | keys | s | keys a second | blocks |"
  echo "|---|---:|---:|---:|---:|"
  client "$CLIENT_PYTHON" ../../bench/blocks.py --handout-only "$KEYS"
  client node blocks_bench.js "$KEYS"
  client "$GOBLOCKS/goblocks" bench "$KEYS"
  client java -cp "$JAVA_CLASSES:$JDBC_JAR" BlocksTest \
    "jdbc:postgresql://127.0.0.1:$SERVER_PORT/postgres?user=postgres" bench "$KEYS"
} | as_user tee "$DIR/results/blocks.md"
mkdir -p "$OUT"
cp "$DIR/results/blocks.md" "$OUT"/
log "results in $OUT/blocks.md"
