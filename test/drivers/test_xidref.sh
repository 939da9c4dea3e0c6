#!/usr/bin/env bash
# rsxid and ksuid checked against the reference implementations, not against ourselves: xidref
# (xidref/main.go, built by run.sh from Debian's rs/xid and segmentio/ksuid) makes and parses,
# the server reads and writes.
#   1. 3,000 xids of rs/xid and 3,000 KSUIDs of segmentio/ksuid: the server reads each, as
#      text and as bytes, field for field (time, machine, pid, counter; time, payload), writes
#      the same text back, and sorts them (ORDER BY the type) in the library's order.
#   2. 3,000 texts for each, edge cases and random ones (valid, a character replaced, cut,
#      extended, the case changed; upper case for xid, above 2^160 - 1 for KSUID): the server
#      accepts a text exactly when the library does, as the same bytes. segmentio/ksuid's Parse
#      also accepts some texts with characters outside base62 (its issue 74), which the server
#      refuses: those are counted apart, and must be refused.
#   3. The server's texts read by the libraries: what the server writes, the libraries read
#      back to the same bytes and fields (server_ids_read, below: the place to check the
#      server's generators too).
# Usage: test_xidref.sh XIDREF_BINARY [PSQL] (PG* from run.sh).
set -euo pipefail
xidref=$1
psql=${2:-psql}
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
N=3000

psql_q -c 'SET client_min_messages = warning' \
  -c 'DROP TABLE IF EXISTS xidref_rsxids, xidref_ksuids, xidref_sorted, xidref_cases, xidref_read' \
  -c 'DROP FUNCTION IF EXISTS xidref_valid(text, regtype)' \
  -c 'CREATE TABLE xidref_rsxids (t text, hex text, unix_s bigint, machine text, pid int, counter int)' \
  -c 'CREATE TABLE xidref_ksuids (t text, hex text, unix_s bigint, payload text)' \
  -c 'CREATE TABLE xidref_sorted (kind text, pos int, t text)' \
  -c 'CREATE TABLE xidref_cases (kind text, input text, verdict text, hex text)' \
  -c 'CREATE TABLE xidref_read (kind text, t text, hex text, unix_s bigint, a text, b int, c int)' \
  -c "CREATE FUNCTION xidref_valid(t text, typ regtype) RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE format('SELECT %L::%s', t, typ);
  RETURN true;
EXCEPTION WHEN invalid_text_representation THEN
  RETURN false;
END \$\$"

# 1. The libraries' IDs, read and sorted by the server.
"$xidref" make-rsxids $N >"$tmp/rsxids"
"$xidref" make-ksuids $N >"$tmp/ksuids"
sed '/^sorted$/,$d' "$tmp/rsxids" >"$tmp/rsxids.made"
sed '1,/^sorted$/d' "$tmp/rsxids" | awk '{print "rsxid\t" NR "\t" $0}' >"$tmp/sorted"
sed '/^sorted$/,$d' "$tmp/ksuids" >"$tmp/ksuids.made"
sed '1,/^sorted$/d' "$tmp/ksuids" | awk '{print "ksuid\t" NR "\t" $0}' >>"$tmp/sorted"
check "rs/xid and segmentio/ksuid made $N IDs each" "$N|$N|$((2 * N))" \
  "$(wc -l <"$tmp/rsxids.made")|$(wc -l <"$tmp/ksuids.made")|$(wc -l <"$tmp/sorted")"
psql_q -c "\\copy xidref_rsxids FROM '$tmp/rsxids.made'"
psql_q -c "\\copy xidref_ksuids FROM '$tmp/ksuids.made'"
psql_q -c "\\copy xidref_sorted FROM '$tmp/sorted'"
check "the server reads rs/xid's xids field for field, as text and as bytes, and sorts them as rs/xid does" \
  "$N|$N|$N|$N|t" "$(psql_q -c "
SELECT count(*),
       count(*) FILTER (WHERE t::rsxid::text = t AND encode(t::rsxid::bytea, 'hex') = hex
                          AND decode(hex, 'hex')::rsxid = t::rsxid),
       count(*) FILTER (WHERE d.ts = to_timestamp(unix_s) AND encode(d.machine, 'hex') = x.machine
                          AND d.pid = x.pid AND d.counter = x.counter
                          AND rsxid_timestamp(t::rsxid) = d.ts AND rsxid_decode(t) = d
                          AND rsxid_decode(decode(hex, 'hex')) = d AND rsxid_at(d.ts) <= t::rsxid),
       count(DISTINCT t),
       (SELECT array_agg(t ORDER BY t::rsxid) FROM xidref_rsxids)
         = (SELECT array_agg(t ORDER BY pos) FROM xidref_sorted WHERE kind = 'rsxid')
  FROM xidref_rsxids x, rsxid_decode(x.t::rsxid) d")"
check "the server reads segmentio/ksuid's KSUIDs field for field, as text and as bytes, and sorts them as segmentio/ksuid does" \
  "$N|$N|$N|$N|t" "$(psql_q -c "
SELECT count(*),
       count(*) FILTER (WHERE t::ksuid::text = t AND encode(t::ksuid::bytea, 'hex') = hex
                          AND decode(hex, 'hex')::ksuid = t::ksuid),
       count(*) FILTER (WHERE d.ts = to_timestamp(unix_s) AND encode(d.payload, 'hex') = k.payload
                          AND ksuid_timestamp(t::ksuid) = d.ts AND ksuid_decode(t) = d
                          AND ksuid_at(d.ts) <= t::ksuid),
       count(DISTINCT t),
       (SELECT array_agg(t ORDER BY t::ksuid) FROM xidref_ksuids)
         = (SELECT array_agg(t ORDER BY pos) FROM xidref_sorted WHERE kind = 'ksuid')
  FROM xidref_ksuids k, ksuid_decode(k.t::ksuid) d")"

# 2. Texts accepted exactly when the library accepts them, as the same bytes. The inputs come
# as hex of their UTF-8 bytes (some hold characters of two and three bytes).
"$xidref" cases-rsxid $N | awk '{print "rsxid\t" $0}' >"$tmp/cases"
"$xidref" cases-ksuid $N | awk '{print "ksuid\t" $0}' >>"$tmp/cases"
psql_q -c "\\copy xidref_cases FROM '$tmp/cases'"
for kind in rsxid ksuid; do
  check "the server accepts $N texts as $kind exactly when the library does, as the same bytes" \
    "$N|0|0" "$(psql_q -c "
SELECT count(*),
       count(*) FILTER (WHERE xidref_valid(s, '$kind') <> (verdict = 'ok')),
       count(*) FILTER (WHERE verdict = 'ok' AND encode(s::$kind::bytea, 'hex') <> hex)
  FROM (SELECT convert_from(decode(input, 'hex'), 'UTF8') AS s, verdict, hex
          FROM xidref_cases WHERE kind = '$kind') c")"
done
# What the cases hold: each verdict for each kind, so that a generator of cases that stopped
# making one kind of input shows here.
check "the cases hold valid texts, refused texts, and texts of segmentio/ksuid issue 74" \
  "t|t|t|t|t" "$(psql_q -c "
SELECT count(*) FILTER (WHERE kind = 'rsxid' AND verdict = 'ok') > 300,
       count(*) FILTER (WHERE kind = 'rsxid' AND verdict = 'err') > 1000,
       count(*) FILTER (WHERE kind = 'ksuid' AND verdict = 'ok') > 300,
       count(*) FILTER (WHERE kind = 'ksuid' AND verdict = 'err') > 1000,
       count(*) FILTER (WHERE kind = 'ksuid' AND verdict = 'bug74') > 10
  FROM xidref_cases")"
echo "# cases: $(psql_q -F ' ' -c "SELECT string_agg(kind || ' ' || verdict || ' ' || n, ', ' ORDER BY kind, verdict)
  FROM (SELECT kind, verdict, count(*) AS n FROM xidref_cases GROUP BY 1, 2) s")"

# 3. The server's texts read by the libraries. server_ids_read KIND QUERY: QUERY gives the
# server's IDs of KIND (one column, id); the library reads each text to the same bytes, and its
# fields are the server's decoder's. The server's generators, once there, are checked by a
# call with their query here (SELECT rsxid() AS id FROM generate_series(1, 3000)), beside what
# is particular to them (the time of the call, the machine and pid, the counter's order).
server_ids_read() {
  local kind=$1 query=$2 what=$3
  psql_q -F $'\t' -c "SELECT id::text, encode(id::bytea, 'hex') FROM ($query) s" >"$tmp/server"
  if ! "$xidref" "read-${kind}s" <"$tmp/server" >"$tmp/read"; then
    check "the library reads $what" "read" "$(tail -n 1 "$tmp/read")"
    return
  fi
  psql_q -c 'TRUNCATE xidref_read'
  awk -v k="$kind" '{print k "\t" $0}' "$tmp/read" >"$tmp/read.tsv"
  if [ "$kind" = rsxid ]; then
    psql_q -c "\\copy xidref_read FROM '$tmp/read.tsv'"
    check "rs/xid reads $what to the same bytes and fields" "$(wc -l <"$tmp/server")|0" "$(psql_q -c "
SELECT count(*), count(*) FILTER (WHERE (d.ts, encode(d.machine, 'hex'), d.pid, d.counter)
                                     IS DISTINCT FROM (to_timestamp(r.unix_s), r.a, r.b, r.c))
  FROM xidref_read r, rsxid_decode(r.t::rsxid) d")"
  else
    psql_q -c "\\copy xidref_read (kind, t, hex, unix_s, a) FROM '$tmp/read.tsv'"
    check "segmentio/ksuid reads $what to the same bytes and fields" "$(wc -l <"$tmp/server")|0" "$(psql_q -c "
SELECT count(*), count(*) FILTER (WHERE (d.ts, encode(d.payload, 'hex'))
                                     IS DISTINCT FROM (to_timestamp(r.unix_s), r.a))
  FROM xidref_read r, ksuid_decode(r.t::ksuid) d")"
  fi
}
server_ids_read rsxid "SELECT substr(sha256(n::text::bytea), 1, 12)::rsxid AS id FROM generate_series(1, $N) n
  UNION ALL SELECT rsxid_at(timestamptz '1970-01-01 00:00:00+00' + n * interval '1 day')
              FROM generate_series(0, 49710, 97) n" \
  "the server's text of $N rsxids of random bytes and 513 of rsxid_at()"
server_ids_read ksuid "SELECT substr(sha256(n::text::bytea), 1, 20)::ksuid AS id FROM generate_series(1, $N) n
  UNION ALL SELECT ksuid_at(timestamptz '2014-05-13 16:53:20+00' + n * interval '1 day')
              FROM generate_series(0, 49710, 97) n" \
  "the server's text of $N KSUIDs of random bytes and 513 of ksuid_at()"

# 4. The server's generators: rsxid() and ksuid() values read by the libraries to the same bytes
# and fields; each value's second, as the library reads it, within the call's (a value may be
# up to a second ahead of the clock: a full second carries into the next, and a stream starts a
# second on); rs/xid reads the server's shard as the machine id; and the library's order of
# the bytes is the order of the calls.
psql_q -c "CREATE TABLE xidref_made AS SELECT clock_timestamp() AS t0, NULL::timestamptz AS t1,
                  n, rsxid() AS x, ksuid() AS k FROM generate_series(1, $N) n" \
  -c 'UPDATE xidref_made SET t1 = clock_timestamp()'
made_window_check() {  # made_window_check WHAT: the rows of xidref_read against the calls' window
  check "$1" "$N|0" "$(psql_q -c "
SELECT count(*), count(*) FILTER (WHERE to_timestamp(r.unix_s) < date_trunc('second', m.t0)
                                     OR to_timestamp(r.unix_s) > m.t1 + interval '2 seconds')
  FROM xidref_read r, (SELECT min(t0) AS t0, max(t1) AS t1 FROM xidref_made) m")"
}
server_ids_read rsxid "SELECT x AS id FROM xidref_made ORDER BY n" "$N values of rsxid()"
made_window_check "rs/xid reads each rsxid()'s second within the calls' window"
check "rs/xid reads the server's shard as the machine id of every rsxid()" "$N" \
  "$(psql_q -c "SELECT count(*) FROM xidref_read WHERE a = lpad(to_hex(current_setting('snowflake.shard_id')::int), 6, '0')")"
server_ids_read ksuid "SELECT k AS id FROM xidref_made ORDER BY n" "$N values of ksuid()"
made_window_check "segmentio/ksuid reads each ksuid()'s second within the calls' window"
# The libraries' byte order (sorted by the Go program) against the order of the calls.
psql_q -F $'\t' -c "SELECT x::text FROM xidref_made ORDER BY random()" | "$xidref" sort-rsxids >"$tmp/sorted-x"
psql_q -F $'\t' -c "SELECT k::text FROM xidref_made ORDER BY random()" | "$xidref" sort-ksuids >"$tmp/sorted-k"
check "rs/xid sorts rsxid()'s values in the order of the calls" \
  "$(psql_q -c 'SELECT x::text FROM xidref_made ORDER BY n')" "$(cat "$tmp/sorted-x")"
check "segmentio/ksuid sorts ksuid()'s values in the order of the calls" \
  "$(psql_q -c 'SELECT k::text FROM xidref_made ORDER BY n')" "$(cat "$tmp/sorted-k")"

psql_q -c 'DROP TABLE xidref_rsxids, xidref_ksuids, xidref_sorted, xidref_cases, xidref_read, xidref_made' \
  -c 'DROP FUNCTION xidref_valid(text, regtype)'
exit $failed
