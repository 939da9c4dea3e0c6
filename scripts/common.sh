# Shared by the scripts: install what is missing, build and install the extension, and run
# PostgreSQL as an unprivileged user. Sourced, not run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BIN/pg_config
# The account that runs servers when the scripts run as root (PostgreSQL refuses root).
SERVER_USER=${SNOWFLAKE_SERVER_USER:-snowflake}

log() { printf '==> %s\n' "$*" >&2; }
# pg_ctl's wait for a server to start or stop (60 s by default), long enough for a busy machine:
# the TAP tests' default timeout.
export PGCTLTIMEOUT=${PGCTLTIMEOUT:-180}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Who runs servers and tests: the caller, or SERVER_USER when the caller is root.
run_user() {
  if [ "$(id -u)" = 0 ]; then echo "$SERVER_USER"; else id -un; fi
}

as_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$SERVER_USER" -- "$@"; else "$@"; fi
}

PACKAGES=(
  "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" postgresql-client-common
  make g++ libgtest-dev libipc-run-perl perl procps
  # lease mode talks to etcd: libcurl and a JSON library to build; etcd, curl and openssl
  # (certificates) to test against
  libcurl4-openssl-dev nlohmann-json3-dev etcd-server curl openssl
)

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  # Debian's postgresql package would create and start a cluster on port 5432; we only
  # want the binaries, and start our own throwaway servers.
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    as_root mkdir -p /etc/postgresql-common/createcluster.d
    echo 'create_main_cluster = false' |
      as_root tee /etc/postgresql-common/createcluster.d/snowflake-no-main-cluster.conf >/dev/null
  fi
  as_root apt-get update -qq
  # No package's service starts on install (etcd-server's would take port 2379): the tests
  # start their own servers. policy-rc.d says so to invoke-rc.d, for this install alone.
  local policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod 755 "$policy"
    made_policy=1
  fi
  local status=0
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || status=$?
  [ -z "$made_policy" ] || as_root rm -f "$policy"
  return "$status"
}

# SNOWFLAKE_INSTALL_ONLY=1: a script installs the packages it needs, then exits there, building
# and running nothing (scripts/matrix.sh readies a chroot so, ahead of the run that uses it).
# Called right after a script's install_packages.
installed_only() { [ -z "${SNOWFLAKE_INSTALL_ONLY:-}" ] || exit 0; }

# A prefix that runs a command as the server user in place ("${EXEC_AS_USER[@]}" cmd &):
# setpriv execs where runuser forks and waits, so that the PID of a background job is the
# command's own, and a signal sent to it reaches it. Empty when not root.
EXEC_AS_USER=()
[ "$(id -u)" != 0 ] ||
  EXEC_AS_USER=(setpriv --reuid="$SERVER_USER" --regid="$SERVER_USER" --init-groups --)

ensure_server_user() {
  [ "$(id -u)" = 0 ] || return 0
  id -u "$SERVER_USER" >/dev/null 2>&1 && return 0
  log "creating unprivileged user $SERVER_USER to run PostgreSQL"
  useradd --system --user-group --home-dir /nonexistent --no-create-home \
    --shell /usr/sbin/nologin "$SERVER_USER"
}

# The work folder: build/ in the checkout, owned by the user who runs the servers; if that
# user cannot reach the checkout (say, it is under /root), a folder under /var/tmp.
WORK=
prepare_work() {
  WORK=$ROOT/build
  mkdir -p "$WORK"
  if [ "$(id -u)" = 0 ]; then
    chown "$SERVER_USER:" "$WORK"
    if ! runuser -u "$SERVER_USER" -- test -w "$WORK"; then
      WORK=/var/tmp/snowflake-build
      mkdir -p "$WORK"
      chown "$SERVER_USER:" "$WORK"
      log "the checkout is not reachable by $SERVER_USER; working in $WORK"
    fi
  fi
}

# Copies the sources into folder $1 (made by as_user), as the server user. Only the sources:
# build outputs in the checkout (ignored by git) must not come along, as tar's whole-second
# times could make them look newer than a source edited since. (safe.directory: root may
# build a checkout that another user owns.)
copy_tree() {
  local git=(git -c safe.directory="$ROOT" -C "$ROOT")
  if command -v git >/dev/null && [ "$("${git[@]}" rev-parse --show-toplevel 2>/dev/null)" = "$ROOT" ]; then
    "${git[@]}" ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do if [ -e "$ROOT/$f" ]; then printf '%s\0' "$f"; fi; done |
      tar -C "$ROOT" --null -T - -cf -
  else
    tar -C "$ROOT" --exclude=./build --exclude=./dist --exclude=./.git --exclude='*.o' \
      --exclude='*.so' --exclude='*.bc' --exclude=./test/unit/unit_tests \
      --exclude=./test/unit/unit_tests_arm64 --exclude=./test/fuzz/fuzz_core \
      --exclude=./bench/core_costs -cf - .
  fi | as_user tar -C "$1" -xf -
}

# Published test vectors (the TypeID spec's own data) are another project's files: kept beside
# the repo in ../shared/vectors (SNOWFLAKE_VECTORS overrides), never in it; the unit tests read
# them from there.
VECTORS=${SNOWFLAKE_VECTORS:-$(realpath -m "$ROOT/../shared/vectors")}

# Copies the sources into WORK/tree (so that every file the build and the tests write belongs
# to the unprivileged user), builds there, and installs into PostgreSQL as root. Another
# installation's pg_config and a tree of its own may be given.
build_and_install() {
  local pg_config=${1:-$PG_CONFIG} tree=${2:-$WORK/tree}
  log "building in $tree"
  as_user mkdir -p "$tree"
  # The folders that make and prove read by wildcard hold sources only: start them afresh,
  # so that a file removed or moved since the last build is not run as a test.
  as_user rm -rf "$tree/sql" "$tree/expected" "$tree/extension" "$tree/test/t" "$tree/test/released"
  copy_tree "$tree"
  as_user make -C "$tree" -s -j"$(nproc)" PG_CONFIG="$pg_config" ERROR_ON_WARNING=1 \
    SNOWFLAKE_VECTORS="$VECTORS" all test/unit/unit_tests
  # Install scripts of the versions a build before this one put there would be taken before the
  # update path: remove them, so that what the tests install is what this Makefile ships, and
  # the released versions' install scripts that the upgrade test updates from.
  as_root sh -c 'rm -f "$1"/extension/snowflake--*.sql' sh "$("$pg_config" --sharedir)"
  as_root make -C "$tree" -s PG_CONFIG="$pg_config" install install-released
}

# A TCP port on loopback at or after $1 that nothing listens on now (another process may take
# it before a server binds it: start_server tries the next one then).
free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# Starts a throwaway server with the extension preloaded: data in $1/data, a socket directory
# of its own and port $2 (54329 by default) there. It listens on no TCP port, so that no other
# process can take its port, unless $3 is "tcp" (the demo): then on loopback, at the first port
# from $2 on that it could bind. Extra postgresql.conf lines come on stdin.
# Sets SERVER_DATA, SERVER_SOCK, SERVER_PORT and PSQL (an array).
start_server() {
  local dir=$1 tcp=${3:-} conf from tries=0
  conf=$(cat)
  SERVER_DATA=$dir/data
  SERVER_SOCK=$dir/sock
  # A Unix socket path must fit in 107 bytes: else a folder of this server's own under /tmp.
  [ ${#SERVER_SOCK} -lt 90 ] || SERVER_SOCK=$(as_user mktemp -d /tmp/snowflake-sock-XXXXXX)
  as_user mkdir -p "$dir" "$SERVER_SOCK"
  if [ -f "$SERVER_DATA/postmaster.pid" ]; then
    log "stopping the previous server in $SERVER_DATA"
    as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m fast stop >/dev/null || true
  fi
  if [ ! -f "$SERVER_DATA/PG_VERSION" ]; then
    as_user "$PG_BIN/initdb" -D "$SERVER_DATA" -U postgres -A trust --no-instructions >/dev/null
  fi
  SERVER_PORT=${2:-54329}
  while :; do
    [ -z "$tcp" ] || SERVER_PORT=$(free_port "$SERVER_PORT")
    as_user tee "$SERVER_DATA/postgresql.auto.conf" >/dev/null <<CONF
listen_addresses = '$([ -z "$tcp" ] || echo 127.0.0.1)'
port = $SERVER_PORT
unix_socket_directories = '$SERVER_SOCK'
shared_preload_libraries = 'snowflake'
$conf
CONF
    from=$(stat -c %s "$dir/server.log" 2>/dev/null || echo 0)
    as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -l "$dir/server.log" -w start >/dev/null && break
    # The port was taken between the check and the bind: the next one.
    if [ -n "$tcp" ] && [ $((tries += 1)) -lt 20 ] &&
      tail -c +$((from + 1)) "$dir/server.log" | grep 'could not bind IPv4 address' >/dev/null; then
      log "port $SERVER_PORT was taken before the server bound it: trying the next"
      SERVER_PORT=$((SERVER_PORT + 1))
      continue
    fi
    tail -n 20 "$dir/server.log" >&2
    die "could not start the server in $SERVER_DATA"
  done
  PSQL=("$PG_BIN/psql" -X -q -h "$SERVER_SOCK" -p "$SERVER_PORT" -U postgres -d postgres
    -v ON_ERROR_STOP=1)
}

# A one-member etcd of the benchmarks, data in $1, as the server user on a free loopback port
# at or after $2: sets ETCD_PORT and ETCD_PID (etcd's own PID), and waits until it is healthy.
start_etcd() {
  local dir=$1 peer
  ETCD_PORT=$(free_port "$2")
  peer=$(free_port $((ETCD_PORT + 1)))
  "${EXEC_AS_USER[@]}" etcd --name bench --data-dir "$dir/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "bench=http://127.0.0.1:$peer" >"$dir/etcd.log" 2>&1 &
  ETCD_PID=$!
  local i
  for i in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"' && return 0
    sleep 0.1
  done
  die "etcd did not start: see $dir/etcd.log"
}

stop_server() {
  as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m fast stop >/dev/null
}

# libfaketime's library, wherever Debian's multiarch layout puts it (the soaks' slow servers).
faketime_library() {
  local libs=(/usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1)
  local lib
  for lib in "${libs[@]}"; do
    if [ -e "$lib" ]; then echo "$lib"; return 0; fi
  done
  die "libfaketime.so.1 not found under /usr/lib/*/faketime or /usr/lib/faketime"
}

# The soaks' end. report_left RUN PIDS: fails, listing the processes of RUN still there.
report_left() {
  printf 'error: processes of %s are still there:\n' "$1" >&2
  # shellcheck disable=SC2086
  ps -o pid,user,args -p "$(echo $2 | tr ' ' ,)" >&2 || true
  return 1
}
# end_run STATUS RUN WHAT: the EXIT trap. Stops WHAT (the script's stop_everything), fails
# if anything is left, and on failure says where RUN's logs are ($DIR).
end_run() {
  local status=$1
  trap - EXIT
  log "stopping $3"
  stop_everything || status=1
  [ "$status" = 0 ] || log "$2 failed (status $status); its logs are in $DIR"
  exit "$status"
}
