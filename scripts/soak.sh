#!/usr/bin/env bash
# The long runs that the test command shortens: 16 clients of load for 60 s
# (test/t/007_load.pl) and 10 minutes of fuzzing (test/fuzz); and, as root on PostgreSQL
# 15, a failover with the primary killed under load under each of two failover managers,
# pg_auto_failover (scripts/failover_soak.sh) and Patroni with etcd
# (scripts/patroni_soak.sh); and 10 minutes of faults on four servers in lease mode
# (scripts/lease_soak.sh). Same set-up as test.sh.
source "$(dirname "$0")/common.sh"

install_packages libfaketime clang libclang-rt-dev
ensure_server_user
prepare_work
build_and_install

status=0
log "load: 16 clients, ${SNOWFLAKE_LOAD_SECONDS:-60} s"
as_user env SNOWFLAKE_LOAD_SECONDS="${SNOWFLAKE_LOAD_SECONDS:-60}" \
  make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" prove_installcheck PROVE_TESTS=test/t/007_load.pl || status=1
log "fuzzing: ${FUZZ_SECONDS:-600} s"
as_user make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" fuzzcheck FUZZ_SECONDS="${FUZZ_SECONDS:-600}" ||
  status=1
log "lease mode under faults: ${SNOWFLAKE_SOAK_SECONDS:-600} s"
"$ROOT/scripts/lease_soak.sh" || status=1
if [ "$(id -u)" = 0 ] && [ "$PG_MAJOR" = 15 ]; then
  log "failover under pg_auto_failover"
  "$ROOT/scripts/failover_soak.sh" || status=1
  log "failover under Patroni"
  "$ROOT/scripts/patroni_soak.sh" || status=1
  log "failover under Patroni, shards leased from its etcd"
  "$ROOT/scripts/patroni_soak.sh" --lease || status=1
fi
exit $status
