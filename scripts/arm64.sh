#!/usr/bin/env bash
# The extension on arm64, from an x86-64 Debian machine: the whole module (glue included,
# against PG_MAJOR's arm64 server headers) and the core's unit tests cross-compiled with
# Debian's g++-aarch64-linux-gnu, and the unit tests run under qemu-user; then Debian's arm64
# server of this machine's PostgreSQL version, with that module, runs under qemu-user too, and
# pg_regress and the TAP tests of what differs by architecture run against it (below).
# SNOWFLAKE_REGRESS picks pg_regress tests, SNOWFLAKE_ARM64_TAP the TAP tests. Other suites may
# run at the same time (scripts/test.sh): the TAP tests take their ports through PostgreSQL's
# reservation in PG_TEST_PORT_DIR, which scripts/test.sh shares between the two.
#
# The arm64 libraries and headers (libcurl, libcrypto, GoogleTest, nlohmann-json, the
# server's headers and pg_config) are Debian's arm64 packages, downloaded by apt-get with
# package lists, archives and status of their own under the work folder, and unpacked there
# with dpkg-deb: the machine's dpkg gets no foreign architecture, and nothing is registered
# with binfmt_misc (qemu-user is installed without its recommended qemu-user-binfmt, and
# every arm64 program is started as qemu-aarch64 -L ROOT PROGRAM). The module is built by
# PGXS as usual, from the arm64 package's own Makefile.global, with that package's pg_config
# run under qemu.
source "$(dirname "$0")/common.sh"

[ "$(dpkg --print-architecture)" != arm64 ] ||
  die "this machine is arm64: the unit suite (scripts/test.sh) runs the tests natively"

install_packages g++-aarch64-linux-gnu qemu-user
installed_only
ensure_server_user
prepare_work

dir=$WORK/arm64
root=$dir/root
tree=$dir/tree
as_user mkdir -p "$dir/apt/lists/partial" "$dir/apt/archives/partial" "$dir/debs"
as_user touch "$dir/apt/status"

# apt for arm64 alone, on this machine's sources (a source without arm64 is skipped).
apt_arm64=(apt-get -q -o APT::Architecture=arm64 -o APT::Architectures=arm64
  -o Dir::State::Lists="$dir/apt/lists" -o Dir::State::status="$dir/apt/status"
  -o Dir::Cache::Archives="$dir/apt/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
# With SNOWFLAKE_ARM64_DOWNLOADED=1 (scripts/test.sh, after a run with
# SNOWFLAKE_ARM64_DOWNLOAD_ONLY=1, below) the archives are in $dir already: no apt runs.
if [ -z "${SNOWFLAKE_ARM64_DOWNLOADED:-}" ]; then
  log "arm64 packages (apt-get for arm64 alone, in $dir/apt)"
  as_user "${apt_arm64[@]}" update >"$dir/apt.log" 2>&1 || { tail -n 20 "$dir/apt.log"; die "apt-get update for arm64 failed"; }
  # Archives the lists no longer have go (a version superseded since the last run): every
  # archive left is unpacked below.
  as_user "${apt_arm64[@]}" autoclean >>"$dir/apt.log" 2>&1
  # What the unit tests link, and the server with libfaketime (the clock-fault TAP test), with
  # every library they need at run time (libc6 among them). The server is of this machine's
  # version to the package: this machine's initdb and pg_ctl refuse a postgres of another.
  download_arm64() {
    server_version=$(dpkg-query -W -f='${Version}' "postgresql-$PG_MAJOR")
    as_user "${apt_arm64[@]}" install -y --download-only --no-install-recommends \
      libcurl4-openssl-dev libssl-dev libgtest-dev nlohmann-json3-dev libstdc++6 \
      "postgresql-$PG_MAJOR=$server_version" libfaketime >>"$dir/apt.log" 2>&1
  }
  if ! download_arm64; then
    # The archive no longer has this machine's version (a point release came out since it was
    # installed): this machine's server and tools are brought to the archive's, whose arm64
    # build the archive has, and the download is tried once more.
    log "the archive has no arm64 postgresql-$PG_MAJOR $server_version: upgrading this machine's to the archive's"
    as_root apt-get update -qq >>"$dir/apt.log" 2>&1 || true
    upgrade=("postgresql-$PG_MAJOR" "postgresql-client-$PG_MAJOR")
    ! dpkg-query -W "postgresql-server-dev-$PG_MAJOR" >/dev/null 2>&1 ||
      upgrade+=("postgresql-server-dev-$PG_MAJOR")
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --only-upgrade \
      "${upgrade[@]}" >>"$dir/apt.log" 2>&1 || true
    download_arm64 || {
      tail -n 20 "$dir/apt.log"
      die "downloading the arm64 libraries and postgresql-$PG_MAJOR $server_version failed"
    }
  fi
  # The server's headers and pg_config with PGXS, without their dependencies (the server and
  # LLVM): nothing of them runs but pg_config.
  as_user rm -f "$dir"/debs/*.deb
  (cd "$dir/debs" && as_user "${apt_arm64[@]}" download \
    "postgresql-server-dev-$PG_MAJOR" "postgresql-client-$PG_MAJOR" >>"$dir/apt.log" 2>&1) ||
    { tail -n 20 "$dir/apt.log"; die "downloading PostgreSQL $PG_MAJOR's arm64 headers failed"; }
fi
# SNOWFLAKE_ARM64_DOWNLOAD_ONLY=1: stops here, after the only steps that run apt (one of them
# may upgrade this machine's server). scripts/test.sh runs it so, alone, before it starts the
# rest beside other suites.
[ -z "${SNOWFLAKE_ARM64_DOWNLOAD_ONLY:-}" ] || { log "arm64 packages downloaded"; exit 0; }

# A fresh root with /usr merged (so that the loader is at /lib/ld-linux-aarch64.so.1 whichever
# of /lib or /usr/lib a suite's libc6 ships it in). The C library's development files, which
# trixie's libcurl4-openssl-dev pulls in, stay out: the cross toolchain has its own
# (libc6-dev-arm64-cross), and the root's libc.so names /lib paths of this machine.
as_user rm -rf "$root"
as_user mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/usr/sbin"
for d in lib bin sbin; do as_user ln -s "usr/$d" "$root/$d"; done
unpacked=0
for deb in "$dir"/apt/archives/*.deb "$dir"/debs/*.deb; do
  # Nor what the server's packages bring that nothing here runs: LLVM for JIT (its module is
  # removed below), Perl and the locales data (postgresql-common's scripts).
  case $(dpkg-deb -f "$deb" Package) in
    libc6-dev | libc-dev-bin | linux-libc-dev | libcrypt-dev) continue ;;
    libllvm* | libz3-* | libperl* | perl-modules-* | locales) continue ;;
  esac
  dpkg-deb --fsys-tarfile "$deb" | as_user tar -x --keep-directory-symlink -C "$root"
  unpacked=$((unpacked + 1))
done
log "unpacked $unpacked arm64 packages into $root"

run_arm64=(qemu-aarch64 -L "$root")
printf '#!/bin/sh\nexec qemu-aarch64 -L "%s" "%s/usr/lib/postgresql/%s/bin/pg_config" "$@"\n' \
  "$root" "$root" "$PG_MAJOR" | as_user tee "$dir/pg_config" >/dev/null
as_user chmod 755 "$dir/pg_config"
server=$("$dir/pg_config" --includedir-server)
[ -f "$server/pg_config.h" ] || die "no arm64 pg_config.h in $server"

log "cross-compiling the module and the unit tests for aarch64 in $tree"
as_user rm -rf "$tree"
as_user mkdir -p "$tree"
copy_tree "$tree"
multiarch=$root/usr/lib/aarch64-linux-gnu
as_user make -C "$tree" -s -j"$(nproc)" ERROR_ON_WARNING=1 SNOWFLAKE_VECTORS="$VECTORS" \
  CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ PG_CONFIG="$dir/pg_config" \
  CPPFLAGS="$("$dir/pg_config" --cppflags) -isystem $root/usr/include/aarch64-linux-gnu -isystem $root/usr/include" \
  PG_LDFLAGS="-L$multiarch -Wl,-rpath-link,$multiarch" \
  all test/unit/unit_tests_arm64

# The module is an arm64 shared object that exports what the server looks up.
so=$tree/snowflake.so
grep -q 'Machine: *AArch64' <<<"$(aarch64-linux-gnu-readelf -h "$so")" || die "$so is not an arm64 object"
exported=$(aarch64-linux-gnu-nm -D --defined-only "$so")
for sym in Pg_magic_func _PG_init; do
  grep -qw "$sym" <<<"$exported" || die "$so does not export $sym"
done
log "snowflake.so for aarch64: $(stat -c %s "$so") bytes, built against the arm64 headers of PostgreSQL $(sed -n 's/^#define PG_VERSION "\(.*\)"/\1/p' "$server/pg_config.h")"

log "the unit tests under ${run_arm64[*]}"
status=0
as_user "${run_arm64[@]}" "$tree/test/unit/unit_tests_arm64" || status=$?
log "the arm64 build and unit tests took $SECONDS s"

# ---- The arm64 server: Debian's arm64 PostgreSQL with the arm64 module, under qemu-user.
# The data directories are made by this machine's initdb of the same version (same catalog,
# alignment and endianness), and this machine's pg_ctl, psql, pgbench, pg_regress and the TAP
# framework drive it: they find "postgres" beside themselves, in a bin folder of copies of
# this machine's tools where postgres is a wrapper that execs the arm64 server under
# qemu-aarch64 -L ROOT. The server's $libdir and share folder are those of ROOT (below): the
# module goes there, installed by the root's own pg_config.
arm_version=$(as_user "${run_arm64[@]}" "$root/usr/lib/postgresql/$PG_MAJOR/bin/postgres" -V)
host_version=$("$PG_BIN/postgres" -V)
[ "$arm_version" = "$host_version" ] ||
  die "the arm64 server is $arm_version, this machine's $host_version: initdb must be of the server's version"
as_user make -C "$tree" -s PG_CONFIG="$dir/pg_config" install install-released
# JIT is not part of this test (its LLVM is not unpacked): the server plans without it, as one
# where the package that holds it is not installed. A folder takes its module's place, for
# qemu's -L falls back to this machine's path (and its x86-64 llvmjit.so) where ROOT has no
# file, and the server takes a folder for no provider.
as_user rm -f "$root/usr/lib/postgresql/$PG_MAJOR/lib/llvmjit.so"
as_user mkdir -p "$root/usr/lib/postgresql/$PG_MAJOR/lib/llvmjit.so"
# The kernel's clocksource, as the arm64 server reads it through qemu's -L root: an arm64
# kernel keeps time by the generic timer, so the server reads CNTVCT_EL0 for IDs (qemu-user
# emulates it from the host's clock, at CNTFRQ_EL0's 62.5 MHz) as it would on arm64 hardware.
clocksource=$root/sys/devices/system/clocksource/clocksource0
as_user mkdir -p "$clocksource"
echo arch_sys_counter | as_user tee "$clocksource/current_clocksource" >/dev/null

bin=$dir/server-bin
as_user rm -rf "$bin"
as_user mkdir -p "$bin"
# Copies, not links: initdb and pg_ctl look for postgres beside their own path with links
# resolved.
for f in "$PG_BIN"/*; do
  case ${f##*/} in postgres | postmaster) continue ;; esac
  as_user cp -L "$f" "$bin/"
done
# The server's argv[0] is the wrapper (qemu's -0): the path it writes to postmaster.opts, which
# pg_ctl restart starts again. It finds its $libdir and share folder at their usual paths
# then, which qemu's -L finds in ROOT (the folder's name must not end in /bin: the server would
# take the folder beside it for $libdir).
#
# libfaketime for the server: the TAP tests preload this machine's (x86-64) library into
# what they start; the wrapper hands the server the arm64 one from ROOT (qemu passes the
# environment on to the program it runs, and -E sets a variable there), and keeps it out
# of qemu itself.
host_multiarch=$(gcc -print-multiarch)
as_user tee "$bin/postgres" >/dev/null <<WRAPPER
#!/bin/sh
# The arm64 PostgreSQL $PG_MAJOR server under qemu-user (scripts/arm64.sh).
if [ -n "\${LD_PRELOAD:-}" ]; then
  preload=\$(printf '%s' "\$LD_PRELOAD" | sed 's,/$host_multiarch/,/aarch64-linux-gnu/,g')
  unset LD_PRELOAD
  exec qemu-aarch64 -L "$root" -0 "$bin/postgres" -E LD_PRELOAD="\$preload" "$root/usr/lib/postgresql/$PG_MAJOR/bin/postgres" "\$@"
fi
exec qemu-aarch64 -L "$root" -0 "$bin/postgres" "$root/usr/lib/postgresql/$PG_MAJOR/bin/postgres" "\$@"
WRAPPER
as_user chmod 755 "$bin/postgres"

# pg_regress and prove from this machine's PGXS, in the cross-compiled tree (they build
# nothing), with bindir the wrapper's folder: pg_regress's own server (test/preload.conf, as
# the regress suite) and the TAP tests' servers are arm64 ones.
# SNOWFLAKE_HOST_PG (set by scripts/test.sh when it installed this build into this machine's
# PostgreSQL): test/arm64/server.pl compares the mask tokens of that x86-64 server.
# SNOWFLAKE_004_TRANSACTIONS: test/t/004_uuidv7_ulid.pl's 8 clients insert 50,000 values of
# each kind each (a fifth of its rows elsewhere): under emulation a value costs some 20 times
# more, and the backends' values interleave from the first transactions.
on_arm64=(env SNOWFLAKE_HOST_PG="${SNOWFLAKE_HOST_PG:-}" SNOWFLAKE_004_TRANSACTIONS=5 make -C "$tree" -s PG_CONFIG="$PG_CONFIG" bindir="$bin")
started=$SECONDS
log "pg_regress on the arm64 server"
if as_user "${on_arm64[@]}" installcheck TAP_TESTS= ${SNOWFLAKE_REGRESS:+REGRESS="$SNOWFLAKE_REGRESS"}; then
  log "pg_regress on arm64 passed in $((SECONDS - started)) s"
else
  cat "$tree/regression.diffs" 2>/dev/null || true
  log "pg_regress on arm64 FAILED"
  status=1
fi

# The TAP tests of what differs by architecture: shared memory and its atomics across
# backends (001, 004: the 128-bit kinds' server-wide order), the reservation's WAL record and
# file through a crash, a SIGKILL and a start with the clock behind (005, libfaketime), and
# the lease worker with libcurl against etcd and masking with AES (test/arm64/server.pl); and
# that kill9_and_wait, which 005 relies on, waits for children whose titles qemu hides
# (test/arm64/kill9_wait.pl: no server, under a second).
arm64_tap=${SNOWFLAKE_ARM64_TAP:-test/arm64/server.pl test/t/005_durability.pl test/t/004_uuidv7_ulid.pl test/t/001_concurrency.pl test/arm64/kill9_wait.pl}
started=$SECONDS
log "TAP tests on the arm64 server: $arm64_tap"
if as_user "${on_arm64[@]}" prove_installcheck PROVE_TESTS="$arm64_tap" \
  PROVE_FLAGS="-j${SNOWFLAKE_PROVE_JOBS:-2}"; then
  log "the TAP tests on arm64 passed in $((SECONDS - started)) s"
else
  for f in "$tree"/tmp_check/log/regress_log_*; do
    [ -f "$f" ] || continue
    echo "---- tail of $f"
    tail -n 40 "$f"
  done
  log "the TAP tests on arm64 FAILED"
  status=1
fi
log "the arm64 suite took $SECONDS s"
exit "$status"
