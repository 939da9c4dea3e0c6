#!/usr/bin/env bash
# Mask keys for snowflake.mask_key_file (README, "IDs safe to show outside"), with openssl:
#
#   scripts/mask_key.sh new ID           a key line: ID, 64 random hex digits, active
#   scripts/mask_key.sh uuidv47 HEX      the 32 hex digits of the uuidv47 key derived from a
#                                        master key (what a uuidv47 library is given, k0||k1)
#
# A new key goes into the file, mode 0600, the old active line losing its "active":
#   umask 077; scripts/mask_key.sh new 2 >> "$PGDATA/mask.keys"
set -euo pipefail

die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# HMAC-SHA256(master key, label) in hex: how every key of a construction is derived
# (docs/internals.md, "Masking").
derive() {
  printf '%s' "$2" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" | awk '{print $NF}'
}

case ${1:-} in
  new)
    id=${2:-}
    [[ $id =~ ^[0-9]+$ ]] && [ "$id" -le 255 ] || die "a key id is a number from 0 to 255"
    printf '%s %s active\n' "$id" "$(openssl rand -hex 32)"
    ;;
  uuidv47)
    hex=${2:-}
    [[ $hex =~ ^[0-9a-fA-F]{64}$ ]] || die "a master key is 64 hex digits"
    derive "$hex" "snowflake mask uuidv47 v1" | cut -c1-32
    ;;
  *)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || exit 2
    ;;
esac
