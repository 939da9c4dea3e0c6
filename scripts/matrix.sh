#!/usr/bin/env bash
# Runs a command (by default scripts/test.sh, every suite) on each supported PostgreSQL major,
# each on Debian's own packages: 15 from bookworm, 17 from trixie, 18 from forky and 19 from
# sid's experimental. A major whose suite is not this machine's runs in a chroot made with
# debootstrap (reused when present), in a mount namespace of its own, so that its /proc, /dev,
# /dev/shm and /sys mounts end with the run and never outlive it.
#
#   scripts/matrix.sh                          every suite on 15, 17, 18 and 19
#   scripts/matrix.sh --versions "17 18"       only those majors
#   scripts/matrix.sh -- bench/run.sh --quick  any command of the repo, on each major
#   scripts/matrix.sh --shell 18               a root shell in 18's chroot
#   scripts/matrix.sh --remove                 unmount-checked removal of every chroot
#   scripts/matrix.sh --root-of 18             where 18 runs: its chroot, or / for this machine
#
# Needs root (debootstrap, chroot, mounts). Chroots live in $SNOWFLAKE_CHROOTS
# (default /var/tmp/snowflake-chroots), and are made from the Debian archive of this machine's
# apt sources, or $SNOWFLAKE_DEBIAN_MIRROR. Exits non-zero when any major fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHROOTS=${SNOWFLAKE_CHROOTS:-/var/tmp/snowflake-chroots}
# The Debian archive: SNOWFLAKE_DEBIAN_MIRROR, or this machine's own (apt_mirror, below).
MIRROR=${SNOWFLAKE_DEBIAN_MIRROR:-}
VERSIONS="15 17 18 19"
MODE=run
SHELL_VERSION=
COMMAND=()

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case $1 in
    --versions) VERSIONS=$2; shift 2 ;;
    --versions=*) VERSIONS=${1#--versions=}; shift ;;
    --shell) MODE=shell; SHELL_VERSION=$2; shift 2 ;;
    --remove) MODE=remove; shift ;;
    --root-of) MODE=root-of; SHELL_VERSION=$2; shift 2 ;;
    --) shift; COMMAND=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ ${#COMMAND[@]} -gt 0 ] || COMMAND=(scripts/test.sh)

# The Debian suite that ships each major.
suite_of() {
  case $1 in
    15) echo bookworm ;;
    17) echo trixie ;;
    18) echo forky ;;
    19) echo sid ;;
    *) die "no Debian suite reachable here ships PostgreSQL $1 (16 is built by construction only)" ;;
  esac
}

# Where two majors meet in one suite, the older one is upgraded to the newer by the pg_upgrade
# test: sid has 18 beside experimental's 19.
upgrade_from() {
  case $1 in
    19) echo 18 ;;
  esac
}

host_suite() { . /etc/os-release && echo "${VERSION_CODENAME:-}"; }

# The first http(s) URI of a Debian archive in this machine's apt sources: sources.list, then
# sources.list.d/*.list and deb822 *.sources files, in the order apt reads them. An archive is
# a "deb" source whose suite is a release's own (bookworm, trixie, sid, stable...): not the
# security archive (bookworm-security), the debug one (bookworm-debug), updates or backports,
# nor a third party's (nodistro, cloud-sdk-bookworm).
apt_mirror() {
  local files=() f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*; do
    case $f in /etc/apt/sources.list | *.list | *.sources) [ ! -f "$f" ] || files+=("$f") ;; esac
  done
  [ ${#files[@]} -gt 0 ] || return 0
  awk -v host="$(host_suite)" '
    function release(s) {
      return (s != "" && s == host) || s ~ /^(buzz|rex|bo|hamm|slink|potato|woody|sarge|etch|lenny|squeeze|wheezy|jessie|stretch|buster|bullseye|bookworm|trixie|forky|duke|sid|experimental|oldoldstable|oldstable|stable|testing|unstable)$/
    }
    function http(u) { return u ~ /^https?:\/\// }
    function pick(u) { sub(/\/+$/, "", u); print u; found = 1; exit }
    # deb822: a stanza ends at a blank line or at the end of its file.
    function stanza(   i, j, k, nt, nu, ns, types, uris, suites) {
      if (uri != "" && enabled != "no") {
        nt = split(tp, types, " "); nu = split(uri, uris, " "); ns = split(su, suites, " ")
        for (i = 1; i <= nt; i++) if (types[i] == "deb")
          for (j = 1; j <= ns; j++) if (release(suites[j]))
            for (k = 1; k <= nu; k++) if (http(uris[k])) pick(uris[k])
      }
      tp = uri = su = enabled = ""
    }
    FNR == 1 { stanza(); deb822 = (FILENAME ~ /\.sources$/) }
    /^[ \t]*#/ { next }
    deb822 && /^[ \t]*$/ { stanza(); next }
    deb822 && /^[ \t]/ {   # a field continued
      if (field == "types") tp = tp " " $0
      else if (field == "uris") uri = uri " " $0
      else if (field == "suites") su = su " " $0
      next
    }
    deb822 {
      line = $0; field = tolower(line); sub(/:.*/, "", field); sub(/^[^:]*:[ \t]*/, "", line)
      if (field == "types") tp = line
      else if (field == "uris") uri = line
      else if (field == "suites") su = line
      else if (field == "enabled") enabled = tolower(line)
      next
    }
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }   # [ options ]
      if (http($i) && release($(i + 1))) pick($i)
    }
    END { if (!found) stanza() }
  ' "${files[@]}"
}

# debootstrap, on this machine: installed once.
ensure_debootstrap() {
  command -v debootstrap >/dev/null ||
    { log "installing debootstrap"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
}

# Creates the chroot of a suite once: minbase, apt set up for the suite, and the PostgreSQL
# packages of the major (from experimental for 19). The rest of what the tests need is
# installed by the scripts themselves, inside, as on any machine.
ensure_chroot() {
  local suite=$1 major=$2 dir=$CHROOTS/$1
  if [ -f "$dir/.snowflake-ready-$major" ]; then return 0; fi
  ensure_debootstrap
  if [ ! -f "$dir/.snowflake-bootstrapped" ]; then
    if [ -z "$MIRROR" ]; then
      MIRROR=$(apt_mirror)
      [ -n "$MIRROR" ] || die "no Debian archive found in this machine's apt sources (/etc/apt/sources.list, \
/etc/apt/sources.list.d/*.list and *.sources: a \"deb\" source with an http(s) URI and a release's suite); \
set SNOWFLAKE_DEBIAN_MIRROR to the URL of a Debian archive"
      log "Debian archive from this machine's apt sources: $MIRROR (SNOWFLAKE_DEBIAN_MIRROR overrides)"
    fi
    log "creating the $suite chroot in $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    # A debootstrap older than the suite knows it by sid's script (same layout).
    local script=/usr/share/debootstrap/scripts/$suite
    [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
    debootstrap --variant=minbase --include=ca-certificates "$suite" "$dir" "$MIRROR" "$script" \
      >"$CHROOTS/$suite.debootstrap.log" 2>&1 ||
      { tail -n 20 "$CHROOTS/$suite.debootstrap.log"; die "debootstrap $suite failed"; }
    {
      echo "deb $MIRROR $suite main"
      [ "$suite" != sid ] || echo "deb $MIRROR experimental main"
    } >"$dir/etc/apt/sources.list"
    # forky's and sid's Release files are past their Valid-Until dates on the mirror.
    [ "$suite" != forky ] && [ "$suite" != sid ] ||
      echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99snowflake-valid-until"
    # Only the binaries: the tests start their own throwaway servers.
    mkdir -p "$dir/etc/postgresql-common/createcluster.d"
    echo 'create_main_cluster = false' \
      >"$dir/etc/postgresql-common/createcluster.d/snowflake-no-main-cluster.conf"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    touch "$dir/.snowflake-bootstrapped"
  fi
  local pkgs="postgresql-$major postgresql-server-dev-$major"
  # 19 is in experimental: its packages, and the libpq they need, come from there; everything
  # else from sid (apt's -t experimental would pull unrelated experimental packages too).
  [ "$major" != 19 ] || pkgs="postgresql-19/experimental postgresql-server-dev-19/experimental
    postgresql-client-19/experimental libpq-dev/experimental libpq5/experimental"
  log "installing PostgreSQL $major in the $suite chroot"
  in_chroot "$dir" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends $(echo $pkgs) >/dev/null" ||
    die "installing PostgreSQL $major in the $suite chroot failed"
  touch "$dir/.snowflake-ready-$major"
}

# Runs a command in a chroot, in a private mount namespace: /proc, /dev (with a tmpfs
# /dev/shm for PostgreSQL's shared memory) and a read-only /sys (the clocksource check reads
# it) are mounted for the command alone and vanish with it.
in_chroot() {
  local dir=$1
  shift
  unshare --mount --propagation private -- /bin/bash -c '
    set -e
    dir=$1; shift
    mount -t proc proc "$dir/proc"
    mount --bind /dev "$dir/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$dir/dev/shm"
    mount --bind /dev/pts "$dir/dev/pts" 2>/dev/null || true
    mount --bind /sys "$dir/sys"
    mount -o remount,bind,ro "$dir/sys"
    exec chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" "$@"
  ' in_chroot "$dir" "$@"
}

# Copies the sources git knows into the chroot (build/ stays, for incremental builds).
copy_sources() {
  local dest=$1/snowflake
  mkdir -p "$dest"
  find "$dest" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
  git -c safe.directory="$ROOT" -C "$ROOT" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do if [ -e "$ROOT/$f" ]; then printf '%s\0' "$f"; fi; done |
    tar -C "$ROOT" --null -T - -cf - | tar -C "$dest" -xf -
  copy_local_cas "$1"
  # Published test vectors (scripts/common.sh's VECTORS) go beside the repo in the chroot too,
  # where the repo is /snowflake: /shared/vectors.
  local vectors=${SNOWFLAKE_VECTORS:-$ROOT/../shared/vectors}
  rm -rf "$1/shared"
  if [ -d "$vectors" ]; then
    mkdir -p "$1/shared/vectors"
    cp -a "$vectors/." "$1/shared/vectors/"
  fi
}

# The machine's own certificate authorities (a TLS proxy's, say) are trusted in the chroot
# too, so that npm reaches its registry there as it does here.
copy_local_cas() {
  local dir=$1 src=/usr/local/share/ca-certificates
  [ -d "$src" ] && [ -x "$dir/usr/sbin/update-ca-certificates" ] || return 0
  if ! diff -r -q "$src" "$dir$src" >/dev/null 2>&1; then
    rm -rf "${dir:?}$src" && cp -a "$src" "$dir$src"
    chroot "$dir" update-ca-certificates >/dev/null 2>&1 || log "update-ca-certificates failed in $dir"
  fi
}

if [ "$MODE" = root-of ]; then
  suite=$(suite_of "$SHELL_VERSION")
  if [ "$suite" = "$(host_suite)" ]; then echo /; else echo "$CHROOTS/$suite"; fi
  exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root: debootstrap, chroot and mounts need it"

mounted_under() { awk -v d="$1" 'index($2, d) == 1 { print $2 }' /proc/mounts; }

if [ "$MODE" = remove ]; then
  [ -d "$CHROOTS" ] || exit 0
  if [ -n "$(mounted_under "$CHROOTS")" ]; then
    mounted_under "$CHROOTS"
    die "something is still mounted under $CHROOTS: not removing"
  fi
  rm -rf --one-file-system "$CHROOTS"
  log "removed $CHROOTS"
  exit 0
fi

if [ "$MODE" = shell ]; then
  suite=$(suite_of "$SHELL_VERSION")
  ensure_chroot "$suite" "$SHELL_VERSION"
  copy_sources "$CHROOTS/$suite"
  in_chroot "$CHROOTS/$suite" env PG_MAJOR="$SHELL_VERSION" bash -c 'cd /snowflake && exec bash -i'
  exit $?
fi

# The chroots a run needs are readied in the background, one after another, while the majors
# before them run: each made (once) and, for the test command, given the packages its suites
# need and the extension built (scripts/test.sh with SNOWFLAKE_INSTALL_ONLY=1 and
# SNOWFLAKE_PREBUILD=1): debootstrap and apt wait mostly on the network and the disk, and the
# build takes a core the tests of the major before it, which mostly wait, leave free. The output goes to $CHROOTS/prepare.log, shown as each major that
# needs a chroot starts.
PREPARE_PID=
start_preparing_chroots() {
  local major needed=()
  for major in $VERSIONS; do
    [ "$(suite_of "$major")" = "$(host_suite)" ] || needed+=("$major")
    rm -f "$CHROOTS/prepared-$major"
  done
  [ ${#needed[@]} -gt 0 ] || return 0
  # This machine's apt is used here, before the tests on this machine use it too.
  ensure_debootstrap
  log "readying the chroots of PostgreSQL ${needed[*]} in the background ($CHROOTS/prepare.log)"
  rm -f "$CHROOTS/prepare.done"
  # At the lowest CPU priority: the builds take what the running major's tests leave idle.
  {
    (renice -n 19 -p "$BASHPID" >/dev/null
      for major in "${needed[@]}"; do prepare_chroot "$major"; done) >"$CHROOTS/prepare.log" 2>&1
    touch "$CHROOTS/prepare.done"
  } &
  PREPARE_PID=$!
  trap '[ -z "$PREPARE_PID" ] || kill "$PREPARE_PID" 2>/dev/null || true' EXIT
}

# The environment of a major's run, in ENVS: PG_MAJOR, the older major its pg_upgrade test
# upgrades from, and the choice of suites and tests (scripts/test.sh), which reaches the
# chroots too.
major_envs() {
  local major=$1 var
  ENVS=(PG_MAJOR="$major")
  [ -z "$(upgrade_from "$major")" ] || ENVS+=(SNOWFLAKE_UPGRADE_FROM_MAJOR="$(upgrade_from "$major")")
  for var in SNOWFLAKE_SUITES SNOWFLAKE_REGRESS PROVE_TESTS; do
    [ -z "${!var:-}" ] || ENVS+=("$var=${!var}")
  done
}

# One chroot, readied for the run: made, and with the test command, its packages installed.
prepare_chroot() {
  local major=$1 suite dir
  suite=$(suite_of "$major")
  dir=$CHROOTS/$suite
  ensure_chroot "$suite" "$major"
  if [ "${COMMAND[*]}" = scripts/test.sh ]; then
    copy_sources "$dir"
    major_envs "$major"
    in_chroot "$dir" env "${ENVS[@]}" SNOWFLAKE_INSTALL_ONLY=1 SNOWFLAKE_PREBUILD=1 /snowflake/scripts/test.sh
  fi
  touch "$CHROOTS/prepared-$major"
}

# Waits until the background has readied the chroot of a major, or has ended (then the
# caller's ensure_chroot makes it, or says why it cannot, and the run installs its packages),
# and shows what it logged since last time.
PREPARE_SHOWN=0
await_chroot() {
  local major=$1
  [ -n "$PREPARE_PID" ] || return 0
  while [ ! -f "$CHROOTS/prepared-$major" ] && [ ! -f "$CHROOTS/prepare.done" ]; do
    sleep 1
  done
  local lines
  lines=$(wc -l <"$CHROOTS/prepare.log")
  [ "$lines" -le "$PREPARE_SHOWN" ] ||
    sed -n "$((PREPARE_SHOWN + 1)),${lines}p" "$CHROOTS/prepare.log" | sed 's/^/(background) /' >&2
  PREPARE_SHOWN=$lines
}

# A function, so that bash has read all of it before it runs: editing the script during a
# run (which takes a while) cannot change what the run does.
run_matrix() {
mkdir -p "$CHROOTS"
start_preparing_chroots
local passed=0 failed=0 failed_names=() summary=() major suite started cmd status took
for major in $VERSIONS; do
  suite=$(suite_of "$major")
  [ "$suite" = "$(host_suite)" ] || await_chroot "$major"
  started=$(date +%s)
  log "PostgreSQL $major ($suite): ${COMMAND[*]}"
  # A command of the repo runs from the copy of the repo; any other as it is.
  cmd=("${COMMAND[@]}")
  major_envs "$major"
  status=0
  if [ "$suite" = "$(host_suite)" ]; then
    [ ! -e "$ROOT/${cmd[0]}" ] || cmd[0]=$ROOT/${cmd[0]}
    env "${ENVS[@]}" "${cmd[@]}" || status=$?
  else
    [ ! -e "$ROOT/${cmd[0]}" ] || cmd[0]=/snowflake/${cmd[0]}
    { ensure_chroot "$suite" "$major" && copy_sources "$CHROOTS/$suite" &&
      in_chroot "$CHROOTS/$suite" env "${ENVS[@]}" "${cmd[@]}"; } || status=$?
  fi
  took=$(( $(date +%s) - started ))
  if [ "$status" = 0 ]; then
    passed=$((passed + 1))
    summary+=("PostgreSQL $major ($suite): passed in ${took} s")
  else
    failed=$((failed + 1))
    failed_names+=("$major")
    summary+=("PostgreSQL $major ($suite): FAILED (exit $status) after ${took} s")
  fi
done

echo
printf '%s\n' "${summary[@]}"
echo "versions: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "failed: PostgreSQL ${failed_names[*]}"; return 1; }
}

run_matrix; exit $?
