#!/usr/bin/env bash
# What a fault costs generation, measured the way a user meets it, each beside the same
# load without the fault, in one run:
#   1. a restart with the system clock behind the reservation (default 120 s, libfaketime):
#      3,000,000 snowflake() in one statement right after the restart, against before it;
#   2. an ID observed at the bound (snowflake.max_clock_offset, 5 s): 2,000,000 snowflake()
#      right after snowflake_observe() of an ID 4.9 s ahead, against the same without it;
#   3. a synchronous standby: 3,000,000 snowflake() with synchronous_standby_names set and
#      the standby streaming, against the same with it unset; and the WAL that generation
#      wrote (the hot path writes none: only the writer's reservation records).
# Medians of --runs (default 3). Builds and installs the extension, and runs throwaway
# servers (build/faults-bench).
#   bench/faults.sh [--runs N] [--behind SECONDS] [--parts 1,2,3]
source "$(dirname "$0")/../scripts/common.sh"

RUNS=3
BEHIND=120
PARTS=1,2,3
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --behind) BEHIND=$2; shift 2 ;;
    --parts) PARTS=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages bc libfaketime
ensure_server_user
prepare_work
build_and_install

FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
[ -n "$FAKETIME_LIB" ] || die "libfaketime.so.1 not found"

DIR=$WORK/faults-bench
as_user rm -rf "$DIR"
start_server "$DIR/primary" "${SNOWFLAKE_BENCH_PORT:-54359}" <<'CONF'
wal_level = replica
max_wal_senders = 4
snowflake.shard_id = 1
CONF
PRIMARY_DATA=$SERVER_DATA
PRIMARY=("${PSQL[@]}")
STANDBY_DATA=
cleanup() {
  [ -z "$STANDBY_DATA" ] || as_user "$PG_BIN/pg_ctl" -D "$STANDBY_DATA" -m immediate stop >/dev/null 2>&1 || true
  as_user "$PG_BIN/pg_ctl" -D "$PRIMARY_DATA" -m fast stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
q() { as_user "${PRIMARY[@]}" -At -c "$1"; }
q "SET client_min_messages = warning; DROP EXTENSION IF EXISTS snowflake; CREATE EXTENSION snowflake"

# Seconds one statement takes, as the client sees it.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  q "$1" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc; }
# Waits until the IDs' time is back with the clock (a lead made by a burst or an observation
# has faded), at most 40 s.
settle() {
  local i
  for i in $(seq 1 400); do
    [ "$(q "SELECT snowflake_timestamp(snowflake()) <= clock_timestamp() + interval '5 ms'")" = t ] && return 0
    sleep 0.1
  done
}
restart() { as_user "$PG_BIN/pg_ctl" -D "$PRIMARY_DATA" -l "$DIR/primary/server.log" -w "$@" >/dev/null; }

echo "PostgreSQL $PG_MAJOR, $(nproc) cores; medians of $RUNS runs"

part() { [[ ",$PARTS," == *",$1,"* ]]; }

# --- 1. A restart with the clock behind.
if part 1; then
BATCH="SELECT count(snowflake()) FROM generate_series(1, 3000000)"
before=()
for _ in $(seq "$RUNS"); do settle; before+=("$(timed "$BATCH")"); done
after_first=()
after=()
for _ in $(seq "$RUNS"); do
  settle
  restart stop
  LD_PRELOAD=$FAKETIME_LIB FAKETIME="-${BEHIND}s" DONT_FAKE_MONOTONIC=1 \
    FAKETIME_DONT_FAKE_MONOTONIC=1 restart start
  after_first+=("$(timed "$BATCH")")
  after+=("$(timed "$BATCH")")
  restart stop
  restart start
done
b=$(median "${before[@]}")
a=$(median "${after_first[@]}")
printf '3,000,000 snowflake(): %.2f s before a restart; %.2f s right after one with the clock %d s behind (then %.2f s): %sx\n' \
  "$b" "$a" "$BEHIND" "$(median "${after[@]}")" "$(ratio "$a" "$b")"
fi

# --- 2. An ID observed at the bound.
if part 2; then
OBSERVED="SELECT count(snowflake()) FROM generate_series(1, 2000000)"
usual=()
observed=()
for _ in $(seq "$RUNS"); do
  settle
  usual+=("$(timed "$OBSERVED")")
  settle
  q "SELECT snowflake_observe(snowflake_at(clock_timestamp() + interval '4900 ms'))"
  observed+=("$(timed "$OBSERVED")")
done
u=$(median "${usual[@]}")
o=$(median "${observed[@]}")
printf '2,000,000 snowflake(): %.2f s as usual; %.2f s right after observing an ID 4.9 s ahead: %s of the usual rate\n' \
  "$u" "$o" "$(ratio "$u" "$o")"
fi

# --- 3. A synchronous standby.
part 3 || exit 0
STANDBY_DATA=$DIR/standby/data
as_user mkdir -p "$DIR/standby"
as_user "$PG_BIN/pg_basebackup" -h "$SERVER_SOCK" -p "$SERVER_PORT" -U postgres -D "$STANDBY_DATA" \
  -R -X stream >/dev/null
# (The primary's socket folder is this run's own, and neither server listens on TCP.)
STANDBY_PORT=$((SERVER_PORT + 1))
as_user tee -a "$STANDBY_DATA/postgresql.auto.conf" >/dev/null <<CONF
port = $STANDBY_PORT
primary_conninfo = 'host=$SERVER_SOCK port=$SERVER_PORT user=postgres application_name=bench_standby'
CONF
as_user "$PG_BIN/pg_ctl" -D "$STANDBY_DATA" -l "$DIR/standby/server.log" -w start >/dev/null
sync_mode() {
  q "ALTER SYSTEM SET synchronous_standby_names = '$1'"
  q "SELECT pg_reload_conf()" >/dev/null
  local i
  for i in $(seq 1 100); do
    [ "$(q "SELECT count(*) FROM pg_stat_replication WHERE sync_state = '$2'")" = 1 ] && return 0
    sleep 0.1
  done
  die "the standby did not become $2"
}
BATCH="SELECT count(snowflake()) FROM generate_series(1, 3000000)"
async=()
sync=()
wal=()
for _ in $(seq "$RUNS"); do
  sync_mode '' async
  settle
  async+=("$(timed "$BATCH")")
  sync_mode 'bench_standby' sync
  settle
  lsn=$(q "SELECT pg_current_wal_lsn()")
  sync+=("$(timed "$BATCH")")
  wal+=("$(q "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn')")")
done
a=$(median "${async[@]}")
s=$(median "${sync[@]}")
printf '3,000,000 snowflake(): %.2f s with an asynchronous standby, %.2f s with a synchronous one: %sx; WAL written meanwhile: %s bytes\n' \
  "$a" "$s" "$(ratio "$s" "$a")" "$(median "${wal[@]}")"
