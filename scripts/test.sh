#!/usr/bin/env bash
# Installs what is missing, builds and installs the extension, then runs every test: the
# META.json check, the core's unit tests, pg_regress (sql/, expected/), the TAP tests
# (test/t/), the driver suite (test/drivers/), the trusted edition (test/trusted/), a tiny
# run of the benchmark (so that it cannot rot), the Debian package with its autopkgtest, and on PostgreSQL 15 the C++ style (make
# formatcheck), fuzzing and the arm64 suite (scripts/arm64.sh). Each suite starts its own
# throwaway servers as an unprivileged user. Exits non-zero on any failure.
#
# While working on one thing, run less (scripts/matrix.sh passes these on to each major):
#   SNOWFLAKE_SUITES="regress tap"   only these suites: meta unit format arm64 fuzz regress tap citus drivers trusted bench package
#   SNOWFLAKE_REGRESS="decode ulid"  only these pg_regress tests
#   PROVE_TESTS="test/t/009_lead_and_writes.pl"  only these TAP tests
# SNOWFLAKE_INSTALL_ONLY=1 installs the packages the chosen suites need, and runs nothing; with
# SNOWFLAKE_PREBUILD=1 too, it also builds and installs the extension, so that the run after it
# finds its objects made (scripts/matrix.sh readies a chroot so while an earlier major runs).
source "$(dirname "$0")/common.sh"

# Whether a suite runs: every one, or those SNOWFLAKE_SUITES names. The arm64 build and
# fuzzing (which runs the core, with no PostgreSQL in it) are the same on every major, and so
# are the benchmarks' scripts, whose tiny runs check that they still run (their figures are
# read from full runs, docs/benchmarks.md); so with every suite they run on 15 alone
# (SNOWFLAKE_ONCE_MAJOR), once in a run of scripts/matrix.sh; named in SNOWFLAKE_SUITES, on
# any major.
wanted() {
  if [ -n "${SNOWFLAKE_SUITES:-}" ]; then
    [[ " $SNOWFLAKE_SUITES " == *" $1 "* ]]
    return
  fi
  case $1 in
    arm64 | fuzz | bench) [ "$PG_MAJOR" = "${SNOWFLAKE_ONCE_MAJOR:-15}" ] || return 1 ;;
  esac
  # The C++ style is checked with one clang-format version, Debian 12's (15's suite).
  [ "$1" != format ] || [ "$PG_MAJOR" = 15 ]
}
# meta and arm64 need neither the build nor a server here: alone, they run without
# installing the extension into this machine's PostgreSQL.
needs_install=
for key in unit fuzz regress tap citus drivers trusted bench package; do
  if wanted "$key"; then needs_install=1; fi
done

# SNOWFLAKE_UPGRADE_FROM_MAJOR=18 (with PG_MAJOR=19): the extension is also built for that
# older major, and the pg_upgrade test upgrades a cluster of it to PG_MAJOR.
UPGRADE_FROM=${SNOWFLAKE_UPGRADE_FROM_MAJOR:-}
upgrade_packages=()
[ -z "$UPGRADE_FROM" ] ||
  upgrade_packages=("postgresql-$UPGRADE_FROM" "postgresql-server-dev-$UPGRADE_FROM")

install_packages libfaketime clang libclang-rt-dev python3 python3-psycopg2 gnuplot-nox fonts-dejavu-core \
  ${upgrade_packages[@]+"${upgrade_packages[@]}"}
# pg_partman for test/t/011_partitioning.pl, where the Debian suite has it for this major
# (asked after the first install, which brings the package lists up to date).
if apt-cache show "postgresql-$PG_MAJOR-partman" >/dev/null 2>&1; then
  install_packages "postgresql-$PG_MAJOR-partman"
else
  log "no postgresql-$PG_MAJOR-partman in this Debian suite: the pg_partman tests skip"
fi
# pglogical 2 for test/t/017_active_active.pl on 15, which has no subscriptions WITH (origin =
# none) to replicate active-active with.
if [ "$PG_MAJOR" = 15 ]; then
  if apt-cache show "postgresql-$PG_MAJOR-pglogical" >/dev/null 2>&1; then
    install_packages "postgresql-$PG_MAJOR-pglogical"
  else
    log "no postgresql-$PG_MAJOR-pglogical in this Debian suite: the active-active test skips on 15"
  fi
fi
if [ -n "${SNOWFLAKE_INSTALL_ONLY:-}" ] && [ -z "${SNOWFLAKE_PREBUILD:-}" ]; then needs_install=; fi
ensure_server_user
prepare_work
if [ -n "$needs_install" ]; then
  build_and_install
  # The arm64 suite compares the arm64 server's mask tokens with this build's, installed here.
  export SNOWFLAKE_HOST_PG=${PG_BIN%/bin}
  if [ -n "$UPGRADE_FROM" ]; then
    build_and_install "/usr/lib/postgresql/$UPGRADE_FROM/bin/pg_config" "$WORK/tree-$UPGRADE_FROM"
    export SNOWFLAKE_UPGRADE_FROM=/usr/lib/postgresql/$UPGRADE_FROM
  fi
fi

passed=0
failed=0
failed_names=()
# record NAME STARTED STATUS [NOTE]: counts a suite's result, and says it with its time
record() {
  if [ "$3" = 0 ]; then
    passed=$((passed + 1))
    log "$1: passed in $((SECONDS - $2)) s${4:-}"
  else
    failed=$((failed + 1))
    failed_names+=("$1")
    log "$1: FAILED after $((SECONDS - $2)) s${4:-}"
  fi
}
suite() {
  local key=$1 name=$2
  shift 2
  wanted "$key" || return 0
  # Installing only: a suite's own script installs what it needs and exits; the other suites
  # need what is installed above.
  if [ -n "${SNOWFLAKE_INSTALL_ONLY:-}" ]; then
    case $1 in "$ROOT"/*.sh) name="the packages of: $name" ;; *) return 0 ;; esac
  fi
  log "$name"
  local started=$SECONDS status=0
  "$@" || status=$?
  record "$name" "$started" "$status"
}

regress() {
  if as_user make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" installcheck TAP_TESTS= \
    ${SNOWFLAKE_REGRESS:+REGRESS="$SNOWFLAKE_REGRESS"}; then return 0; fi
  cat "$WORK/tree/regression.diffs" 2>/dev/null || true
  return 1
}

# Three TAP tests at a time (SNOWFLAKE_PROVE_JOBS): most of a test's time is spent waiting
# for servers, etcd and leases, not computing (at two at a time, 180 s of CPU in 400 s on 2
# cores), and the tests wait for conditions, so a busy machine slows them without failing them;
# each takes its ports through PostgreSQL's port reservation and keeps its servers and etcd in
# a folder of its own.
tap() {
  if as_user make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" prove_installcheck \
    PROVE_FLAGS="-j${SNOWFLAKE_PROVE_JOBS:-3}" ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"}; then return 0; fi
  local f
  for f in "$WORK"/tree/tmp_check/log/regress_log_*; do
    [ -f "$f" ] || continue
    echo "---- tail of $f"
    tail -n 40 "$f"
  done
  return 1
}

# A Citus cluster (a coordinator and two workers, test/t/025_citus.pl) where Citus is installed
# for this major. Citus is in no Debian suite and the test command builds none: elsewhere the
# suite says what it needs and skips.
citus_library() { echo "$("$PG_CONFIG" --pkglibdir)/citus.so"; }
citus() {
  [ -z "${SNOWFLAKE_INSTALL_ONLY:-}" ] || return 0
  SNOWFLAKE_PROVE_JOBS=1 PROVE_TESTS=test/t/025_citus.pl tap
}

suite meta "META.json (PGXN Meta Spec 1.0.0)" python3 "$ROOT/test/meta_check.py"
suite unit "unit tests (core, fake clock)" as_user "$WORK/tree/test/unit/unit_tests"
if wanted format; then install_packages clang-format; fi
suite format "C++ style (.clang-format, clang-format $(clang-format --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1))" \
  make -C "$ROOT" -s formatcheck
# The arm64 suite is mostly qemu computing, and the suites after it up to the trusted edition's
# mostly wait (for servers, etcd, leases and fsync): with others, it runs beside them, at a
# lower CPU priority, and is waited for before the benchmarks and the package (which puts the
# Debian package in place of the installed build that test/arm64/server.pl compares tokens
# with). Its steps that run apt (one may upgrade this machine's server) run first, alone. The
# TAP tests of both reserve their ports in one folder (PG_TEST_PORT_DIR). Its output is printed
# when it ends.
# When this script ends first (a failure, a signal): the arm64 suite's process group, and its
# servers, which pg_ctl started in sessions of their own, outside that group (an immediate stop).
arm64_stop() {
  [ -n "$arm64_pid" ] || return 0
  kill -- "-$arm64_pid" 2>/dev/null || true
  local pid
  while IFS= read -r -d '' pid; do
    kill -QUIT "$(head -n 1 "$pid")" 2>/dev/null || true
  done < <(find "$WORK/arm64" -name postmaster.pid -print0 2>/dev/null)
  log "the arm64 suite was stopped before it ended: its output so far is in $WORK/arm64.log"
}
arm64_name="arm64 (cross-compiled; unit tests, pg_regress and TAP tests on an arm64 server under qemu-user)"
arm64_pid=
if wanted arm64 && [ -n "$needs_install" ] && [ -z "${SNOWFLAKE_INSTALL_ONLY:-}" ]; then
  export PG_TEST_PORT_DIR=$WORK/portlock
  as_user mkdir -p "$PG_TEST_PORT_DIR"
  arm64_started=$SECONDS
  if SNOWFLAKE_ARM64_DOWNLOAD_ONLY=1 "$ROOT/scripts/arm64.sh"; then
    log "$arm64_name: started beside the suites that follow (output in $WORK/arm64.log, printed when it ends)"
    # setsid: a process group of its own, ended with this script (the EXIT trap)
    trap arm64_stop EXIT
    SNOWFLAKE_ARM64_DOWNLOADED=1 setsid -w nice -n 10 "$ROOT/scripts/arm64.sh" >"$WORK/arm64.log" 2>&1 &
    arm64_pid=$!
  else
    record "$arm64_name" "$arm64_started" 1 " (downloading its packages)"
  fi
else
  suite arm64 "$arm64_name" "$ROOT/scripts/arm64.sh"
fi
arm64_wait() {
  [ -n "$arm64_pid" ] || return 0
  local status=0
  wait "$arm64_pid" || status=$?
  arm64_pid=
  log "$arm64_name: output"
  cat "$WORK/arm64.log"
  record "$arm64_name" "$arm64_started" "$status" " (beside other suites)"
}
suite fuzz "fuzzing (libFuzzer, ASan, UBSan; 30 s)" \
  as_user make -C "$WORK/tree" -s PG_CONFIG="$PG_CONFIG" fuzzcheck
suite regress "pg_regress" regress
suite tap "TAP" tap
if wanted citus && [ ! -f "$(citus_library)" ]; then
  log "the Citus suite skips on PostgreSQL $PG_MAJOR: it needs Citus installed for this major ($(citus_library)), which no Debian suite packages"
else
  suite citus "Citus (a coordinator and two workers, test/t/025_citus.pl)" citus
fi
suite drivers "drivers (psycopg 3, psycopg2, node-postgres, SQLAlchemy, Django, masking, Go, JDBC)" \
  env SNOWFLAKE_DRIVERS_NO_BUILD=1 "$ROOT/test/drivers/run.sh"
# The trusted edition on a server with no library of ours preloaded, judged by the C extension
# built and installed above.
suite trusted "trusted edition (SQL only, installed by a database owner; judged by the C extension)" \
  env SNOWFLAKE_TRUSTED_NO_BUILD=1 "$ROOT/test/trusted/run.sh"
arm64_wait
suite bench "benchmark (tiny run)" "$ROOT/bench/run.sh" --quick --out "$WORK/bench-quick"
suite bench "lease benchmark (tiny run)" "$ROOT/bench/lease.sh" --quick --out "$WORK/bench-quick"
suite bench "masking benchmark (tiny run)" "$ROOT/bench/mask.sh" --quick --out "$WORK/bench-quick"
suite bench "blocks benchmark (tiny run)" "$ROOT/bench/blocks.sh" --quick --out "$WORK/bench-quick"
suite bench "two-shard benchmark (tiny run)" "$ROOT/bench/two_shards.sh" --quick --out "$WORK/bench-quick"
suite bench "trusted edition benchmark (tiny run)" "$ROOT/bench/trusted.sh" --quick
# Where the Citus suite runs, the Citus benchmark's tiny run too (about 20 s).
if wanted citus && [ -f "$(citus_library)" ]; then
  suite bench "Citus benchmark (tiny run)" "$ROOT/bench/citus.sh" --quick --out "$WORK/bench-quick"
fi
# Last: it installs the Debian package in place of the build, then puts the build back.
suite package "Debian package (build, install, autopkgtest)" "$ROOT/scripts/package.sh"

if [ -n "${SNOWFLAKE_INSTALL_ONLY:-}" ]; then
  [ "$failed" -eq 0 ] || die "installing the packages of ${failed_names[*]} failed"
  log "installed what the suites need"
  exit 0
fi
echo
echo "suites: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "failed: ${failed_names[*]}"
  exit 1
fi
