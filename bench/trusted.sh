#!/usr/bin/env bash
# What the trusted edition costs, beside nextval() and the C extension, in one run on one
# throwaway server (the library preloaded there, for the C extension's generators; the
# trusted edition in a database of its own, installed by a non-superuser owner).
#   1. One session: SELECT count(f()) FROM generate_series(1, N), N = 1,000,000 by default,
#      each kind in turn, ROUNDS rounds (5): the best time per ID, and its ratio to nextval()
#      of a plain sequence (CACHE 1, as the trusted counters).
#   2. 8 sessions (pgbench -c 8, DURATION seconds each, 10 by default): statements of one ID
#      (SELECT f()) and of 1,000 (SELECT count(f()) FROM generate_series(1, 1000)): IDs a second.
#   3. A primary-key insert of ROWS rows (2,000,000 by default) in one statement, keyed by the
#      trusted snowflake(), the C extension's and gen_random_uuid(), one after the other.
# Usage: bench/trusted.sh [--quick] (as root, or a user that can run PostgreSQL). Uses the
# installed C extension (build and install it first: make install). N=, ROUNDS=, DURATION=,
# ROWS= override; --quick is the test command's tiny run (so that the script cannot rot).
source "$(dirname "$0")/../scripts/common.sh"

ensure_server_user
prepare_work
if [ "${1:-}" = --quick ]; then
  N=20000 ROUNDS=1 DURATION=1 ROWS=20000
fi
N=${N:-1000000}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
ROWS=${ROWS:-2000000}
DIR=$WORK/trusted-bench
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR"
start_server "$DIR" "${SNOWFLAKE_TRUSTED_BENCH_PORT:-54395}" <<'CONF'
snowflake.shard_id = 7
max_connections = 40
CONF
trap 'stop_server' EXIT

"${PSQL[@]}" -c "CREATE ROLE tr_owner LOGIN" -c "CREATE DATABASE tr OWNER tr_owner" -c "CREATE DATABASE c OWNER tr_owner" >/dev/null
"${PSQL[@]}" -d c -c "CREATE EXTENSION snowflake" >/dev/null
"${PSQL[@]}" -U tr_owner -d tr -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null
"${PSQL[@]}" -U tr_owner -d tr -c "SELECT snowflake_configure(shard_id => 5)" \
  -c "CREATE SEQUENCE plain_seq CACHE 1" >/dev/null

# name|database|expression
KINDS=(
  "nextval() (plain sequence)|tr|nextval('plain_seq')"
  "trusted snowflake()|tr|snowflake()"
  "C snowflake()|c|snowflake()"
  "trusted snowflake_uuidv7()|tr|snowflake_uuidv7()"
  "C snowflake_uuidv7()|c|snowflake_uuidv7()"
  "trusted ulid()|tr|ulid()"
  "C ulid()|c|ulid()"
  "gen_random_uuid() (core)|tr|gen_random_uuid()"
)
declare -A best
for round in $(seq 1 "$ROUNDS"); do
  for k in "${KINDS[@]}"; do
    IFS='|' read -r name db expr <<<"$k"
    ms=$("${PSQL[@]}" -U tr_owner -d "$db" -c '\timing on' -c "SELECT count($expr) FROM generate_series(1, $N)" |
      sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    if [ -z "${best[$name]:-}" ] || awk -v a="$ms" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
      best[$name]=$ms
    fi
  done
  log "round $round of $ROUNDS done"
done
echo "One session, SELECT count(f()) FROM generate_series(1, $N), best of $ROUNDS:"
printf '  %-28s %10s %8s\n' kind "ns per ID" "x nextval"
base=${best["nextval() (plain sequence)"]}
for k in "${KINDS[@]}"; do
  IFS='|' read -r name _ _ <<<"$k"
  awk -v n="$name" -v ms="${best[$name]}" -v base="$base" -v N="$N" \
    'BEGIN { printf "  %-28s %10.0f %8.2f\n", n, ms * 1e6 / N, ms / base }'
done

echo "8 sessions (pgbench -c 8 -j 2 -T $DURATION), IDs a second:"
printf '  %-28s %14s %14s\n' kind "1 per statement" "1,000 per statement"
for k in "${KINDS[@]:0:5}"; do
  IFS='|' read -r name db expr <<<"$k"
  echo "SELECT $expr;" | as_user tee "$DIR/one.sql" >/dev/null
  echo "SELECT count($expr) FROM generate_series(1, 1000);" | as_user tee "$DIR/batch.sql" >/dev/null
  one=$(as_user "$PG_BIN/pgbench" -h "$SERVER_SOCK" -p "$SERVER_PORT" -U tr_owner -n -c 8 -j 2 -T "$DURATION" \
    -f "$DIR/one.sql" "$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  batch=$(as_user "$PG_BIN/pgbench" -h "$SERVER_SOCK" -p "$SERVER_PORT" -U tr_owner -n -c 8 -j 2 -T "$DURATION" \
    -f "$DIR/batch.sql" "$db" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  awk -v n="$name" -v a="$one" -v b="$batch" 'BEGIN { printf "  %-28s %14.0f %14.0f\n", n, a, b * 1000 }'
done

echo "A primary-key insert of $ROWS rows in one statement (INSERT ... SELECT), seconds:"
for k in "trusted snowflake()|tr|bigint|snowflake()" "C snowflake()|c|bigint|snowflake()" \
  "gen_random_uuid() (core)|tr|uuid|gen_random_uuid()"; do
  IFS='|' read -r name db type expr <<<"$k"
  ms=$("${PSQL[@]}" -U tr_owner -d "$db" \
    -c "CREATE TABLE bench_keys (id $type PRIMARY KEY DEFAULT $expr, n int)" -c '\timing on' \
    -c "INSERT INTO bench_keys (n) SELECT g FROM generate_series(1, $ROWS) g" |
    sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
  "${PSQL[@]}" -U tr_owner -d "$db" -c "DROP TABLE bench_keys" >/dev/null
  awk -v n="$name" -v ms="$ms" 'BEGIN { printf "  %-28s %10.2f\n", n, ms / 1000 }'
done
