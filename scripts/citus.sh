#!/usr/bin/env bash
# Builds Citus from its vendored release (../shared/vendor/citus-14.0.1.tar.gz, see
# scripts/common.sh's vendor_file) and installs it into PG_MAJOR's PostgreSQL, for the Citus
# suite (test/t/025_citus.pl) and bench/citus.sh. Citus is not in Debian, and this release
# builds against PostgreSQL 16, 17 and 18 only: on another major the script says so and exits 3.
#
# The build goes to the work folder, never the repo: WORK/citus/<major>-<first 16 hex digits of
# the tarball's SHA-256>, untarred and built there with_llvm=no (the JIT bitcode is most of the
# build time on 2 cores), then installed into a staging folder. A second run on the same machine
# finds that folder and only copies the staged files into PostgreSQL (when they differ).
source "$(dirname "$0")/common.sh"

CITUS_TARBALL_NAME=citus-14.0.1.tar.gz

case $PG_MAJOR in
  16 | 17 | 18) ;;
  *)
    log "Citus 14.0.1 does not build for PostgreSQL $PG_MAJOR (16, 17 and 18 only): nothing to build"
    exit 3
    ;;
esac

# What Citus's configure asks for beyond the extension's own build needs.
install_packages libcurl4-openssl-dev liblz4-dev libzstd-dev libicu-dev gcc
installed_only
ensure_server_user
prepare_work

tarball=$(vendor_file "$CITUS_TARBALL_NAME")
sum=$(sha256sum "$tarball" | cut -c1-16)
dir=$WORK/citus/$PG_MAJOR-$sum
stage=$dir/stage
pkglibdir=$("$PG_CONFIG" --pkglibdir)

if [ ! -f "$dir/built" ]; then
  log "building Citus ($CITUS_TARBALL_NAME, sha256 $sum...) for PostgreSQL $PG_MAJOR in $dir"
  started=$SECONDS
  as_user rm -rf "$dir"
  as_user mkdir -p "$dir"
  as_user tar -C "$dir" -xzf "$tarball"
  src=$(echo "$dir"/citus-*/)
  (cd "$src" && as_user ./configure PG_CONFIG="$PG_CONFIG" >"$dir/configure.log" 2>&1) ||
    { tail -n 30 "$dir/configure.log" >&2; die "Citus's configure failed: $dir/configure.log"; }
  as_user make -C "$src" -s -j"$(nproc)" with_llvm=no >"$dir/make.log" 2>&1 ||
    { tail -n 30 "$dir/make.log" >&2; die "building Citus failed: $dir/make.log"; }
  as_user make -C "$src" -s with_llvm=no install DESTDIR="$stage" >>"$dir/make.log" 2>&1 ||
    { tail -n 30 "$dir/make.log" >&2; die "staging Citus failed: $dir/make.log"; }
  as_user touch "$dir/built"
  log "Citus built in $((SECONDS - started)) s"
else
  log "Citus for PostgreSQL $PG_MAJOR already built in $dir (sha256 $sum...)"
fi

# The staged tree mirrors the installation's absolute paths: copy whatever differs.
if ! cmp -s "$stage$pkglibdir/citus.so" "$pkglibdir/citus.so"; then
  log "installing Citus into PostgreSQL $PG_MAJOR"
  as_root cp -R --preserve=mode,timestamps "$stage/." /
fi
