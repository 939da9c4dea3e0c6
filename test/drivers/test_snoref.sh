#!/usr/bin/env bash
# sno checked against the reference implementation, not against ourselves: snoref
# (snoref/main.go, built from the vendored muyo/sno) reads 20,000 snos the server made (same
# text and 10 bytes, metabyte and partition as asked, time within the call, (time, sequence)
# strictly increasing, and each metabyte's snos); the server decodes 4,000 snos the reference
# made field for field and sorts them in the reference's order. (rs/xid's xids and KSUIDs:
# test_xidref.sh.)
# Usage: test_snoref.sh SNOREF_BINARY [PSQL] (PG* and SNOWFLAKE_TEST_SHARD from run.sh).
set -euo pipefail
snoref=$1
psql=${2:-psql}
shard=${SNOWFLAKE_TEST_SHARD:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
psql_q() { "$psql" -X -q -v ON_ERROR_STOP=1 -At "$@"; }
failed=0
check() {  # check WHAT EXPECTED GOT
  if [ "$2" = "$3" ]; then echo "ok: $1"; else
    echo "not ok: $1: got \"$3\", expected \"$2\""
    failed=1
  fi
}

# 1. The server's snos, read by the reference. The IDs' clock may be ahead of the system
# clock (a reservation carried over a restart): by at most the gap it shows before, which
# only shrinks.
gap=$(psql_q -c 'SELECT greatest(clock_gap_ms, 0) + 1 FROM snowflake_status()')
psql_q -F $'\t' -c "
SELECT n, floor(extract(epoch FROM before) * 1000)::bigint, ceil(extract(epoch FROM after) * 1000)::bigint,
       n % 256, $shard, id::text, encode(id::bytea, 'hex')
  FROM (SELECT n, clock_timestamp() AS before, sno(n % 256) AS id, clock_timestamp() AS after
          FROM generate_series(1, 20000) n) s
 ORDER BY n" >"$tmp/server"
check "the reference reads the server's 20,000 snos" "ok 20000" "$("$snoref" check-server "$gap" <"$tmp/server")"

# 2. The reference's snos, decoded and sorted by the server.
"$snoref" make-snos >"$tmp/made"
sed '/^sorted$/,$d' "$tmp/made" >"$tmp/ref"
sed '1,/^sorted$/d' "$tmp/made" | awk '{print NR "\t" $0}' >"$tmp/sorted"
check "the reference made 4,000 snos" "4000|4000" "$(wc -l <"$tmp/ref")|$(wc -l <"$tmp/sorted")"
psql_q -c 'SET client_min_messages = warning' -c 'DROP TABLE IF EXISTS snoref_ref, snoref_sorted' \
  -c 'CREATE TABLE snoref_ref (t text, hex text, unix_ms bigint, meta int, partition int, sequence int, tick boolean)' \
  -c 'CREATE TABLE snoref_sorted (pos int, t text)'
psql_q -c "\\copy snoref_ref FROM '$tmp/ref'"
psql_q -c "\\copy snoref_sorted FROM '$tmp/sorted'"
check "the server decodes the reference's snos field for field, and sorts them as it does" \
  "4000|4000|4000|4000|4|t" "$(psql_q -c "
SELECT count(*),
       count(*) FILTER (WHERE t::sno::text = t AND encode(t::sno::bytea, 'hex') = hex
                          AND decode(hex, 'hex')::sno = t::sno),
       count(*) FILTER (WHERE d.ts = 'epoch'::timestamptz + unix_ms * interval '1 ms' AND d.meta = r.meta
                          AND d.partition = r.partition AND d.sequence = r.sequence
                          AND d.tick = r.tick AND sno_timestamp(t::sno) = d.ts),
       count(DISTINCT t),
       count(DISTINCT (r.meta, r.partition)),
       (SELECT array_agg(t ORDER BY t::sno) FROM snoref_ref)
         = (SELECT array_agg(t ORDER BY pos) FROM snoref_sorted)
  FROM snoref_ref r, sno_decode(r.t::sno) d")"

psql_q -c 'DROP TABLE snoref_ref, snoref_sorted'
exit $failed
