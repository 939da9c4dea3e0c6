#!/usr/bin/env bash
# The Debian package (debian/), end to end: builds the source package and one binary package
# per installed PostgreSQL major with dpkg-buildpackage, in a throwaway copy under the work
# folder and as the unprivileged user; installs postgresql-$PG_MAJOR-snowflake with dpkg;
# runs the package's autopkgtest (debian/tests/installcheck) against it the way autopkgtest
# does, in a fresh unpack of the source package; then purges the package and installs the
# extension from the build tree again (as scripts/test.sh leaves it), pass or fail.
source "$(dirname "$0")/common.sh"

install_packages build-essential dpkg-dev debhelper postgresql-server-dev-all fakeroot
installed_only
ensure_server_user
prepare_work

version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/snowflake.control")
debversion=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
[ "${debversion%-*}" = "$version" ] ||
  die "debian/changelog is at $debversion, snowflake.control at $version"
pkg=postgresql-$PG_MAJOR-snowflake
dir=$WORK/package
src=$dir/postgresql-snowflake-$version

as_user rm -rf "$dir"
as_user mkdir -p "$src"
# The sources alone, as build_and_install copies them.
copy_tree "$src"
# The upstream tarball of the 3.0 (quilt) source package: the same files without debian/.
as_user tar -C "$dir" --exclude="${src##*/}/debian" \
  -czf "$dir/postgresql-snowflake_$version.orig.tar.gz" "${src##*/}"

log "dpkg-buildpackage -us -uc in $src (log: $dir/build.log)"
if ! (cd "$src" && as_user env HOME="$dir" DEB_BUILD_OPTIONS="parallel=$(nproc)" \
  dpkg-buildpackage -us -uc >"$dir/build.log" 2>&1); then
  tail -n 60 "$dir/build.log"
  die "dpkg-buildpackage failed"
fi

# One package per major whose server headers are installed (debian/rules builds for
# PG_SUPPORTED_VERSIONS=installed), each with the module, the control file, the install
# script of this version and every upgrade script, and no other script: no install script
# of another version; and the mask key tool the README's recipe runs.
majors=$(PG_SUPPORTED_VERSIONS=installed /usr/share/postgresql-common/supported-versions)
for v in $majors; do
  deb=$(ls "$dir"/postgresql-"$v"-snowflake_"$debversion"_*.deb 2>/dev/null) ||
    die "no postgresql-$v-snowflake package was built (majors installed: $(echo $majors))"
  contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
  ext=./usr/share/postgresql/$v/extension
  scripts=("$ext/snowflake--$version.sql")
  for f in "$ROOT"/extension/snowflake--*--*.sql; do
    [ ! -e "$f" ] || scripts+=("$ext/${f##*/}")
  done
  for f in "./usr/lib/postgresql/$v/lib/snowflake.so" "$ext/snowflake.control" "${scripts[@]}" \
    "./usr/lib/postgresql/$v/bin/snowflake_mask_key"; do
    grep -qxF "$f" <<<"$contents" || die "$(basename "$deb") lacks $f"
  done
  extra=$(grep -x "$ext/snowflake--.*\.sql" <<<"$contents" | grep -vxF -f <(printf '%s\n' "${scripts[@]}")) &&
    die "$(basename "$deb") holds scripts the build does not ship: $(echo $extra)"
  log "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
done
ls "$dir"/postgresql-snowflake_"$debversion".dsc >/dev/null || die "no source package was built"

# Whatever happens next, leave PostgreSQL as the other suites and developers expect it.
restore() {
  local status=$?
  log "purging $pkg and installing the extension from the build tree again"
  as_root env DEBIAN_FRONTEND=noninteractive dpkg --purge "$pkg" >/dev/null || status=1
  build_and_install || status=1
  exit "$status"
}
trap restore EXIT

deb=$(ls "$dir"/"$pkg"_"$debversion"_*.deb)
log "installing $(basename "$deb")"
as_root env DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >/dev/null ||
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq >/dev/null
[ "$(dpkg-query -W -f='${Status}' "$pkg")" = "install ok installed" ] || die "$pkg is not installed"
dpkg -S "/usr/lib/postgresql/$PG_MAJOR/lib/snowflake.so" | grep -q "^$pkg:" ||
  die "the installed snowflake.so is not $pkg's"

# The key recipe of docs/masking.md as printed, from the package, run as root: the file is
# the data directory owner's (here the unprivileged user's folder), mode 0600.
if [ "$(id -u)" = 0 ]; then
  keydir=$(as_user mktemp -d)
  /usr/lib/postgresql/"$PG_MAJOR"/bin/snowflake_mask_key new 1 "$keydir/mask.keys" 2>/dev/null
  [ "$(stat -c '%U %a' "$keydir/mask.keys")" = "$SERVER_USER 600" ] ||
    die "snowflake_mask_key run as root made $(stat -c '%U %a' "$keydir/mask.keys"), not $SERVER_USER's 600"
  rm -rf "$keydir"
  log "the package's snowflake_mask_key, run as root, made a key file of $SERVER_USER's, mode 0600"
fi

# autopkgtest runs each test from an unpacked source package, as an unprivileged user.
log "autopkgtest: debian/tests/installcheck against the installed $pkg"
as_user dpkg-source -x "$dir/postgresql-snowflake_$debversion.dsc" "$dir/autopkgtest" >/dev/null
(cd "$dir/autopkgtest" && as_user env HOME="$dir" debian/tests/installcheck)
