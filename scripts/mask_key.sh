#!/usr/bin/env bash
# Mask keys for snowflake.mask_key_file (README, "IDs safe to show outside"), with openssl:
#
#   snowflake_mask_key new ID FILE      adds a key line to FILE (ID, 64 random hex digits,
#                                       active), the line that was active losing its
#                                       "active"; FILE is made mode 0600, and when run as
#                                       root, given to the owner of its folder (the data
#                                       directory's: the server's user). The file before and
#                                       after is checked with the server's own parser
#                                       (snowflake_mask_key_check): a file the server would
#                                       not load is left as it is
#   snowflake_mask_key new ID           prints the key line alone
#   snowflake_mask_key uuidv47 < FILE   the 32 hex digits of the uuidv47 key derived from the
#                                       master key (64 hex digits) read from standard input
#                                       (what a uuidv47 library is given, k0||k1)
#
# make install puts it beside pg_config as snowflake_mask_key (the Debian package too):
#   sudo /usr/lib/postgresql/17/bin/snowflake_mask_key new 1 /var/lib/postgresql/17/main/mask.keys
# The master key never goes on a command line (where ps and shell history show it):
#   awk '$1 == 2 {print $2}' "$PGDATA/mask.keys" | snowflake_mask_key uuidv47
set -euo pipefail

die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# HMAC-SHA256(master key, label) in hex: how every key of a construction is derived
# (docs/internals.md, "Masking"). Computed from its definition, H((K ^ opad) || H((K ^ ipad)
# || label)), with the key's bytes made by bash's builtin printf and piped to openssl, so
# that no command line (openssl's -macopt hexkey:, for one) holds the key.
derive() {
  local hex=$1 label=$2 ipad='' opad='' byte i inner
  for ((i = 0; i < 64; i++)); do
    byte=0
    ((i < 32)) && byte=$((16#${hex:2*i:2}))
    printf -v ipad '%s\\x%02x' "$ipad" $((byte ^ 0x36))
    printf -v opad '%s\\x%02x' "$opad" $((byte ^ 0x5c))
  done
  inner=$({ printf '%b' "$ipad"; printf '%s' "$label"; } | openssl dgst -sha256 | awk '{print $NF}')
  { printf '%b' "$opad"; printf '%b' "$(printf '%s' "$inner" | sed 's/../\\x&/g')"; } |
    openssl dgst -sha256 | awk '{print $NF}'
}

# The key file checker, built from the server's own parser: beside this script once
# installed (snowflake_mask_key_check), in the source tree's top folder before.
checker() {
  local here c
  here=$(dirname "$(readlink -f "$0")")
  for c in "$here/snowflake_mask_key_check" "$here/../snowflake_mask_key_check"; do
    if [ -x "$c" ]; then printf '%s\n' "$c"; return 0; fi
  done
  die "snowflake_mask_key_check not found beside $0 (make builds it; make install puts it there)"
}

case ${1:-} in
  new)
    # As the server reads a key id: 1 to 3 digits, 0 to 255; written without leading zeros.
    id=${2:-}
    [[ $id =~ ^[0-9]{1,3}$ ]] && [ "$((10#$id))" -le 255 ] ||
      die "a key id is a number from 0 to 255 (at most 3 digits), not \"$id\""
    id=$((10#$id))
    line="$id $(openssl rand -hex 32) active"
    if [ $# -lt 3 ]; then
      printf '%s\n' "$line"
      exit 0
    fi
    file=$3 dir=$(dirname "$3")
    [ -d "$dir" ] || die "no folder $dir"
    check=$(checker)
    old=''
    if [ -e "$file" ]; then
      [ -f "$file" ] && [ ! -L "$file" ] || die "$file is not a regular file"
      # The file as it is must load (unless it holds no key yet: empty, or comments alone):
      # the tool changes nothing the server would refuse.
      if awk '{ sub(/#.*/, "") } NF { found = 1 } END { exit !found }' "$file"; then
        ids=$("$check" "$file") || die "$file is not a key file the server loads; correct it first"
        [[ " ${ids% active *} " != *" $id "* ]] || die "$file already has a key $id"
      fi
      # The active line loses its word active; a comment after it stays.
      old=$(awk '{
          code = $0; comment = ""
          if ((i = index($0, "#")) > 0) { code = substr($0, 1, i - 1); comment = substr($0, i) }
          sub(/^[ \t]+/, "", code); sub(/[ \t\r]+$/, "", code)
          n = split(code, w, /[ \t]+/)
          if (n == 3 && w[3] == "active") { print w[1] " " w[2] (comment == "" ? "" : "  " comment); next }
          print
        }' "$file")
    fi
    # Checked with the server's parser before the file is touched; then written in place
    # (truncated, never replaced), so that a file's owner and mode stay; a new one is made
    # 0600, as snowflake.mask_key_file requires.
    staged=$(umask 077 && mktemp "$dir/.snowflake_mask_key.XXXXXX")
    trap 'rm -f "$staged"' EXIT
    { [ -z "$old" ] || printf '%s\n' "$old"; printf '%s\n' "$line"; } > "$staged"
    problem=$("$check" "$staged" 2>&1 >/dev/null) ||
      die "with the new key $file would not load (${problem#"$staged: "}): it is unchanged"
    (
      umask 077
      cat "$staged" > "$file"
    )
    chmod 600 "$file"
    [ "$(id -u)" != 0 ] || chown "$(stat -c %u:%g "$dir")" "$file"
    printf 'key %s added to %s, active; reload the server to use it (SELECT pg_reload_conf())\n' "$id" "$file" >&2
    ;;
  uuidv47)
    [ $# -eq 1 ] || die "give the master key on standard input, not as an argument (ps and shell history show arguments)"
    IFS= read -r hex || true
    [[ $hex =~ ^[0-9a-fA-F]{64}$ ]] || die "a master key is 64 hex digits, on standard input"
    derive "$hex" "snowflake mask uuidv47 v1" | cut -c1-32
    ;;
  *)
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || exit 2
    ;;
esac
