#!/usr/bin/env bash
# scripts/mask_key.sh uuidv47 reads the master key from standard input and hands it to no
# command line (ps, /proc/PID/cmdline and shell history show command lines): it gives
# HMAC-SHA256(key, "snowflake mask uuidv47 v1")'s first 16 bytes, as Python's hmac does,
# while an openssl that records its arguments sees no part of the key; a key given as an
# argument is refused.
set -euo pipefail
script=${1:-../../scripts/mask_key.sh}
key=1166d5663436ad4e63bf3eb9202c92670ecdff90dedb0772c63e189932d70154
want=$(python3 -c 'import hashlib, hmac, sys
print(hmac.new(bytes.fromhex(sys.stdin.read().strip()), b"snowflake mask uuidv47 v1", hashlib.sha256).hexdigest()[:32])' <<<"$key")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s/argv"\nexec %s "$@"\n' "$tmp" "$(command -v openssl)" >"$tmp/openssl"
chmod +x "$tmp/openssl"
status=0
got=$(PATH="$tmp:$PATH" "$script" uuidv47 <<<"$key") || status=$?
if [ "$status" -ne 0 ] || [ "$got" != "$want" ]; then
  echo "not ok: mask_key.sh uuidv47 < key gave \"$got\" (exit $status), not $want" >&2
  exit 1
fi
if grep -qi -e "${key:0:16}" -e "${key:16:16}" -e "${key:32:16}" -e "${key:48:16}" "$tmp/argv"; then
  echo "not ok: the master key is on openssl's command line: $(cat "$tmp/argv")" >&2
  exit 1
fi
if err=$("$script" uuidv47 "$key" 2>&1 </dev/null) || [[ $err != *"standard input"* ]]; then
  echo "not ok: a master key given as an argument is not refused: $err" >&2
  exit 1
fi
echo "ok: mask_key.sh uuidv47 reads the key from standard input, on no command line"
