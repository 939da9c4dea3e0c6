#!/usr/bin/env bash
# The lease soak (test/soak/lease_soak.pl): 4 servers in lease mode on one 3-member etcd
# cluster (users on, JWT tokens) under pgbench load for SNOWFLAKE_SOAK_SECONDS (600), with
# random kills, clean restarts, partitions from etcd, clock steps, an etcd member stopped,
# changes of etcd's users and roles and a backend killed; every ID gathered, 0 duplicates, and
# each fault's seconds without generation. Everything it starts is stopped at its end. The
# report: $WORK/lease_soak.txt (and bench/results/lease_soak.txt with --keep). --faults draws
# from some kinds alone: kill, restart, partition, clock back, clock forward, member, users,
# backend kill (comma-separated); --rate the load's transactions (50 IDs each) a second on
# each server (1000).
#   scripts/lease_soak.sh [--seconds N] [--faults LIST] [--rate N] [--keep]
source "$(dirname "$0")/common.sh"

SECONDS_=${SNOWFLAKE_SOAK_SECONDS:-600}
KEEP=
FAULTS=${SNOWFLAKE_SOAK_FAULTS:-}
RATE=${SNOWFLAKE_SOAK_RATE:-1000}
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_=$2; shift 2 ;;
    --faults) FAULTS=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages libfaketime
ensure_server_user
prepare_work
build_and_install

report=$WORK/lease_soak.txt
as_user rm -f "$report"
status=0
as_user env SNOWFLAKE_SOAK_SECONDS="$SECONDS_" SNOWFLAKE_SOAK_REPORT="$report" \
  SNOWFLAKE_SOAK_FAULTS="$FAULTS" SNOWFLAKE_SOAK_RATE="$RATE" \
  make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" prove_installcheck \
  PROVE_TESTS=test/soak/lease_soak.pl PROVE_FLAGS=--verbose || status=1
[ ! -f "$report" ] || cat "$report"
if [ -n "$KEEP" ] && [ -f "$report" ]; then
  cp "$report" "$ROOT/bench/results/lease_soak.txt"
fi
[ "$status" = 0 ] || log "the lease soak failed; its logs are in $WORK/tree/tmp_check"
exit "$status"
