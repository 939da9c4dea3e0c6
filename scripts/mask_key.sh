#!/usr/bin/env bash
# Mask keys for snowflake.mask_key_file (README, "IDs safe to show outside"), with openssl:
#
#   snowflake_mask_key new ID FILE      adds a key line to FILE (ID, 64 random hex digits,
#                                       active), the line that was active losing its
#                                       "active"; FILE is made mode 0600, and when run as
#                                       root, given to the owner of its folder (the data
#                                       directory's: the server's user)
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

case ${1:-} in
  new)
    id=${2:-}
    [[ $id =~ ^[0-9]+$ ]] && [ "$id" -le 255 ] || die "a key id is a number from 0 to 255"
    line="$id $(openssl rand -hex 32) active"
    if [ $# -lt 3 ]; then
      printf '%s\n' "$line"
      exit 0
    fi
    file=$3 dir=$(dirname "$3")
    [ -d "$dir" ] || die "no folder $dir"
    old=''
    if [ -e "$file" ]; then
      [ -f "$file" ] && [ ! -L "$file" ] || die "$file is not a regular file"
      awk -v id="$id" '$1 == id {bad = 1} END {exit bad}' "$file" || die "$file already has a key $id"
      old=$(sed 's/[[:space:]]\{1,\}active[[:space:]]*$//' "$file")
    fi
    # Written in place (truncated, never replaced), so that a file's owner and mode stay;
    # a new one is made 0600, as snowflake.mask_key_file requires.
    (
      umask 077
      { [ -z "$old" ] || printf '%s\n' "$old"; printf '%s\n' "$line"; } > "$file"
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
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || exit 2
    ;;
esac
