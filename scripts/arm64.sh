#!/usr/bin/env bash
# The extension on arm64, from an x86-64 Debian machine: the whole module (glue included,
# against PG_MAJOR's arm64 server headers) and the core's unit tests cross-compiled with
# Debian's g++-aarch64-linux-gnu, and the unit tests run under qemu-user.
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
log "arm64 packages (apt-get for arm64 alone, in $dir/apt)"
as_user "${apt_arm64[@]}" update >"$dir/apt.log" 2>&1 || { tail -n 20 "$dir/apt.log"; die "apt-get update for arm64 failed"; }
# What the unit tests link, with every library it needs at run time (libc6 among them).
as_user "${apt_arm64[@]}" install -y --download-only --no-install-recommends \
  libcurl4-openssl-dev libssl-dev libgtest-dev nlohmann-json3-dev libstdc++6 >>"$dir/apt.log" 2>&1 ||
  { tail -n 20 "$dir/apt.log"; die "downloading the arm64 libraries failed"; }
# The server's headers and pg_config with PGXS, without their dependencies (the server and
# LLVM): nothing of them runs but pg_config.
as_user rm -f "$dir"/debs/*.deb
(cd "$dir/debs" && as_user "${apt_arm64[@]}" download \
  "postgresql-server-dev-$PG_MAJOR" "postgresql-client-$PG_MAJOR" >>"$dir/apt.log" 2>&1) ||
  { tail -n 20 "$dir/apt.log"; die "downloading PostgreSQL $PG_MAJOR's arm64 headers failed"; }

# A fresh root with /usr merged (so that the loader is at /lib/ld-linux-aarch64.so.1 whichever
# of /lib or /usr/lib a suite's libc6 ships it in). The C library's development files, which
# trixie's libcurl4-openssl-dev pulls in, stay out: the cross toolchain has its own
# (libc6-dev-arm64-cross), and the root's libc.so names /lib paths of this machine.
as_user rm -rf "$root"
as_user mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/usr/sbin"
for d in lib bin sbin; do as_user ln -s "usr/$d" "$root/$d"; done
unpacked=0
for deb in "$dir"/apt/archives/*.deb "$dir"/debs/*.deb; do
  case $(dpkg-deb -f "$deb" Package) in
    libc6-dev | libc-dev-bin | linux-libc-dev | libcrypt-dev) continue ;;
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
as_user make -C "$tree" -s -j"$(nproc)" ERROR_ON_WARNING=1 \
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
log "the arm64 build and tests took $SECONDS s"
exit "$status"
