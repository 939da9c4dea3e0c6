#!/usr/bin/env bash
# Rows a second written into a Citus cluster through the coordinator and through both workers
# at once, for each key: bigint DEFAULT snowflake() (every node leasing its shard from one
# etcd, one configuration), bigserial (Citus's own advice: each node draws from its node
# group's 2^48 range), uuid DEFAULT gen_random_uuid() and uuid DEFAULT snowflake_uuidv7(), in
# one run on one cluster. Each key's table is distributed by the key (4 shards); for each, one
# pgbench per node, --clients each, run --seconds at once, each transaction a multi-row INSERT
# of --batch rows; then the table's rows are counted, and any repeated key fails the run.
# Needs Citus installed for PG_MAJOR (it is in no Debian suite: without it, the script says so
# and ends). Builds the extension, starts a one-member etcd and three
# throwaway servers on loopback, and stops them at the end. Writes bench/results/citus.md
# (or --out DIR).
#   bench/citus.sh [--seconds N] [--clients N] [--batch N] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

SECONDS_EACH=15
CLIENTS=2
BATCH=100
OUT=$ROOT/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) SECONDS_EACH=3; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages curl etcd-server
installed_only
# Citus is in no Debian suite, and nothing here builds it: where it is not installed for this
# major, the benchmark says what it needs and ends.
citus_so=$("$PG_CONFIG" --pkglibdir)/citus.so
if [ ! -f "$citus_so" ]; then
  log "the Citus benchmark skips on PostgreSQL $PG_MAJOR: it needs Citus installed for this major ($citus_so), which no Debian suite packages"
  exit 0
fi
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/citus-bench
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR"

DATAS=() ETCD_PID=
stop_all() {
  local d
  for d in ${DATAS[@]+"${DATAS[@]}"}; do
    as_user "$PG_BIN/pg_ctl" -D "$d" -m fast stop >/dev/null 2>&1 || true
  done
  [ -z "$ETCD_PID" ] || kill "$ETCD_PID" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop_all EXIT
start_etcd "$DIR" 23890

# One configuration for every node; Citus first in the preload list.
NAMES=(coordinator worker1 worker2) PORTS=() SOCKS=()
port=${SNOWFLAKE_BENCH_PORT:-54391}
for name in "${NAMES[@]}"; do
  start_server "$DIR/$name" "$port" tcp <<CONF
shared_preload_libraries = 'citus,snowflake'
max_connections = 100
max_prepared_transactions = 50
citus.node_conninfo = 'sslmode=disable'
citus.shard_count = 4
snowflake.shard_source = etcd
snowflake.etcd_endpoints = 'http://127.0.0.1:$ETCD_PORT'
CONF
  DATAS+=("$SERVER_DATA") PORTS+=("$SERVER_PORT") SOCKS+=("$SERVER_SOCK")
  port=$((SERVER_PORT + 1))
done
q() { # q NODE-INDEX SQL
  as_user "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "${SOCKS[$1]}" -p "${PORTS[$1]}" \
    -U postgres -d postgres -c "$2"
}
for i in 0 1 2; do q "$i" "SET client_min_messages = warning; CREATE EXTENSION citus"; done
q 0 "SELECT citus_set_coordinator_host('127.0.0.1', ${PORTS[0]})" >/dev/null
q 0 "SELECT citus_add_node('127.0.0.1', ${PORTS[1]})" >/dev/null
q 0 "SELECT citus_add_node('127.0.0.1', ${PORTS[2]})" >/dev/null
q 0 "SET client_min_messages = warning; CREATE EXTENSION snowflake"
for i in 0 1 2; do
  for _ in $(seq 1 300); do
    [ "$(q "$i" "SELECT lease_state FROM snowflake_status()")" = held ] && break
    sleep 0.1
  done
  [ "$(q "$i" "SELECT lease_state FROM snowflake_status()")" = held ] ||
    die "${NAMES[$i]} holds no lease: $(q "$i" "SELECT etcd_error FROM snowflake_status()")"
done
shards=$(for i in 0 1 2; do printf '%s %s, ' "${NAMES[$i]}" "$(q "$i" "SELECT lease_shard FROM snowflake_status()")"; done)

KINDS=("snowflake()" bigserial "gen_random_uuid()" "snowflake_uuidv7()")
table_of() { case $1 in "snowflake()") echo b_snowflake ;; bigserial) echo b_bigserial ;;
  "gen_random_uuid()") echo b_random_uuid ;; *) echo b_uuidv7 ;; esac; }
column_of() { case $1 in "snowflake()") echo "bigint DEFAULT snowflake()" ;; bigserial) echo bigserial ;;
  "gen_random_uuid()") echo "uuid DEFAULT gen_random_uuid()" ;; *) echo "uuid DEFAULT snowflake_uuidv7()" ;; esac; }

rows=()
for kind in "${KINDS[@]}"; do
  t=$(table_of "$kind")
  q 0 "CREATE TABLE $t (id $(column_of "$kind") PRIMARY KEY, v int NOT NULL);
       SELECT create_distributed_table('$t', 'id')" >/dev/null
  values=$(seq 1 "$BATCH" | sed 's/.*/(&)/' | paste -sd,)
  echo "INSERT INTO $t (v) VALUES $values;" | as_user tee "$DIR/$t.sql" >/dev/null
  pids=()
  for i in 0 1 2; do
    as_user "$PG_BIN/pgbench" -n -h "${SOCKS[$i]}" -p "${PORTS[$i]}" -U postgres -c "$CLIENTS" -j 1 \
      -T "$SECONDS_EACH" -f "$DIR/$t.sql" postgres >"$DIR/$t.$i.out" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { cat "$DIR/$t".*.out >&2; die "pgbench failed for $kind"; }; done
  total=0 per=()
  for i in 0 1 2; do
    tps=$(awk '/^tps = / { print $3 }' "$DIR/$t.$i.out")
    r=$(echo "$tps * $BATCH" | bc | cut -d. -f1)
    per+=("$r") total=$((total + r))
  done
  read -r n distinct < <(q 0 "SELECT count(*), count(DISTINCT id) FROM $t" | tr '|' ' ')
  [ "$n" = "$distinct" ] || die "$kind: $n rows but $distinct distinct keys"
  rows+=("| \`$kind\` | $(printf "%d" "$total") | $(printf "%d" "${per[0]}") | $(printf "%d" "${per[1]}") | $(printf "%d" "${per[2]}") | $(printf "%d" "$n") |")
  log "$kind: $total rows/s (coordinator ${per[0]}, workers ${per[1]} and ${per[2]}), $n rows, none repeated"
done

mkdir -p "$OUT"
{
  echo "Rows a second into a Citus $(q 0 "SELECT extversion FROM pg_extension WHERE extname = 'citus'") cluster on PostgreSQL $PG_MAJOR, $(nproc) cores (all three servers and"
  echo "the clients on one machine): a coordinator and two workers, each its own server on loopback,"
  echo "one snowflake configuration (lease mode, one-member etcd; leases: ${shards%, }); each key's table"
  echo "distributed by the key in 4 shards; $CLIENTS pgbench clients on each node at once for $SECONDS_EACH s,"
  echo "each transaction one INSERT of $BATCH rows; every key distinct after each run."
  echo
  echo "| key | rows/s, all nodes | through the coordinator | through worker 1 | through worker 2 | rows |"
  echo "|---|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} | tee "$OUT/citus.md"
log "results in $OUT/citus.md"
