# Sourced by test/trusted/run.sh (section 8): the masks of trusted/src/mask.sql, judged by the C
# extension in $CDB of the same server under the same keys (its key file in $SERVER_DATA, read
# when the library loads in a backend and on reload: no preload needed).
#   - Without pgcrypto (the edition as run.sh installed it): masks and key_add refuse with 55000,
#     everything else worked all along. pgcrypto in a schema of its own, bound, then masks work.
#   - An install where pgcrypto is there already (in schema extensions, as on Supabase): bound at
#     install; the known answers of docs/internals.md and of the C unit tests' fingerprints.
#   - $N IDs (edges, small, random 64-bit), with no prefix and with prefixes: the C extension's
#     tokens equal, each side unmasks the other's; sno and ULID masks equal both ways.
#   - A second key, active, in both: old tokens still unmask on both, new ones equal; the old key
#     removed: its tokens refused on both.
#   - Changed, truncated, forged tokens, wrong prefixes, bad prefix arguments: C's SQLSTATE.
#   - Keys: bad ids, bad or refused keys, a taken id, removing the active key: refused, one key
#     active throughout; another role masks but cannot read the keys or add or remove one.
#   - ns per ID of snowflake_mask and snowflake_unmask, trusted and C (printed, not asserted).

MK_OUT=$DIR/out/mask
as_user mkdir -p "$MK_OUT"
MK_K1=$(openssl rand -hex 32)
MK_K2=$(openssl rand -hex 32)
KAT_KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f

# mask_key_file LINES: the C extension's key file, written as the server's user (mode 0600, in
# the data directory), then a reload
mask_key_file() {
  as_user bash -c "umask 077 && printf '%s\n' \"\$@\" >'$SERVER_DATA/mask.keys.tmp' && mv '$SERVER_DATA/mask.keys.tmp' '$SERVER_DATA/mask.keys'" _ "$@"
  q postgres "$CDB" "SELECT pg_reload_conf()" >/dev/null
}
# c_masks_like TOKEN: waits (60 s at most) until a new backend of the C extension masks 1 as TOKEN
c_masks_like() {
  local i
  for i in $(seq 1 600); do
    [ "$(q postgres "$CDB" "SELECT snowflake_mask(1)" 2>/dev/null)" = "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# pgcrypto absent: the masks refuse, the rest of the edition ran without it (sections 2 to 7)
check "pgcrypto is not in $DB: the edition installed and ran without it" 0 \
  "$(q "$OWNER" "$DB" "SELECT count(*) FROM pg_extension WHERE extname = 'pgcrypto'")"
check "snowflake_mask without a key: 55000, as C without a key file" 55000 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_mask(1)')"
check "snowflake_mask_key_add without pgcrypto: 55000" 55000 \
  "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_mask_key_add(3, '$MK_K1', true)")"
check "snowflake_mask_use_pgcrypto without pgcrypto: 55000" 55000 "$(sqlstate "$OWNER" "$DB" 'SELECT snowflake_mask_use_pgcrypto()')"
check "the refused key_add left no key" 0 "$(q "$OWNER" "$DB" 'SELECT count(*) FROM snowflake_mask_keys')"
# C without a key file (none set yet): the same SQLSTATE
same_state "SELECT snowflake_mask(1)" "SELECT snowflake_mask(1)"
judge_states "$DB"
# the owner installs pgcrypto (a trusted extension) in a schema of its own, then binds the masks
q "$OWNER" "$DB" "CREATE SCHEMA crypto" "CREATE EXTENSION pgcrypto SCHEMA crypto" >/dev/null
check "snowflake_mask_use_pgcrypto by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_mask_use_pgcrypto()')"
check "snowflake_mask_use_pgcrypto binds pgcrypto in schema crypto" crypto "$(q "$OWNER" "$DB" 'SELECT snowflake_mask_use_pgcrypto()')"
check "DROP EXTENSION pgcrypto is refused while the masks use it (2BP01)" 2BP01 "$(sqlstate "$OWNER" "$DB" 'DROP EXTENSION pgcrypto')"

# the same key in both: id 3, active. The C extension's file is named with ALTER SYSTEM, in a
# session that loaded the library (which reserves the setting's prefix); a reload gives it to
# every backend that loads the library after.
q postgres "$CDB" "LOAD 'snowflake'" "ALTER SYSTEM SET snowflake.mask_key_file = 'mask.keys'" >/dev/null
mask_key_file "3 $MK_K1 active"
q "$OWNER" "$DB" "SELECT snowflake_mask_key_add(3, '$MK_K1', true)" >/dev/null
first=$(q "$OTHER" "$DB" 'SELECT snowflake_mask(1)')
if c_masks_like "$first"; then ok "the C extension loaded the key file, and masks 1 as the trusted edition does"; else
  bad "the C extension does not mask 1 as the trusted edition ($first): $(q postgres "$CDB" 'SELECT snowflake_mask(1)' 2>&1)"; fi

# N IDs: edges, small ones, random 64-bit ones; prefixes of 1 to 63 characters
MK_IDS="SELECT i, CASE WHEN i <= 12 THEN (ARRAY[-9223372036854775808, -9223372036854775807, -4294967296, -2, -1, 0, 1, 2,
    2147483647, 4294967296, 9223372036854775806, 9223372036854775807])[i]
  WHEN i <= 1000 THEN i - 500 ELSE ('x' || md5(i::text))::bit(64)::bigint END AS id,
  (ARRAY['ord', 'a', 'user_account', repeat('ab', 31) || 'c'])[i % 4 + 1] AS p
  FROM generate_series(1, $N) i"
"${PSQL[@]}" -U "$OTHER" -d "$DB" -At \
  -c "\\copy (SELECT i, id, p, snowflake_mask(id), snowflake_mask(id, p) FROM ($MK_IDS) s) TO '$MK_OUT/trusted.csv' CSV" >/dev/null
"${PSQL[@]}" -U postgres -d "$CDB" -At \
  -c "\\copy (SELECT i, id, p, snowflake_mask(id), snowflake_mask(id, p) FROM ($MK_IDS) s) TO '$MK_OUT/c.csv' CSV" >/dev/null
check "$N IDs: the C extension's tokens, with and without a prefix, equal the trusted edition's byte for byte" \
  "" "$(cmp "$MK_OUT/trusted.csv" "$MK_OUT/c.csv" 2>&1)"
check "the C extension unmasks the trusted edition's $N tokens (and prefixed ones) to their IDs; distinct IDs, distinct tokens" "$N|t|0" \
  "$("${PSQL[@]}" -U postgres -d "$CDB" -At -c "CREATE TEMP TABLE t (i int, id bigint, p text, tok text, tokp text)" \
    -c "\\copy t FROM '$MK_OUT/trusted.csv' CSV" \
    -c "SELECT count(*), count(DISTINCT tok) = count(DISTINCT id), count(*) FILTER (WHERE snowflake_unmask(tok) IS DISTINCT FROM id
          OR snowflake_unmask(tokp, p) IS DISTINCT FROM id) FROM t")"
check "the trusted edition unmasks the C extension's $N tokens (and prefixed ones, in upper case) to their IDs" "$N|0" \
  "$("${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "CREATE TEMP TABLE t (i int, id bigint, p text, tok text, tokp text)" \
    -c "\\copy t FROM '$MK_OUT/c.csv' CSV" \
    -c "SELECT count(*), count(*) FILTER (WHERE snowflake_unmask(tok) IS DISTINCT FROM id
          OR snowflake_unmask(upper(tokp), p) IS DISTINCT FROM id) FROM t")"

# sno (10 bytes; the C type from bytea's hex text) and ULID masks, 10,000 each, both ways
MK_SNO="SELECT i, decode(substr(md5(i::text), 1, 20), 'hex') AS b, (ARRAY['', 'ord'])[i % 2 + 1] AS p,
  md5('u' || i)::uuid AS u FROM generate_series(1, 10000) i"
"${PSQL[@]}" -U "$OTHER" -d "$DB" -At \
  -c "\\copy (SELECT i, encode(b, 'hex'), p, sno_mask(b, p), u, ulid_mask(u), ulid_mask(u, 3) FROM ($MK_SNO) s) TO '$MK_OUT/sno_trusted.csv' CSV" >/dev/null
"${PSQL[@]}" -U postgres -d "$CDB" -At \
  -c "\\copy (SELECT i, encode(b, 'hex'), p, sno_mask(('\\x' || encode(b, 'hex'))::sno, p), u, ulid_mask(u::ulid)::uuid, ulid_mask(u::ulid, 3)::uuid FROM ($MK_SNO) s) TO '$MK_OUT/sno_c.csv' CSV" >/dev/null
check "10,000 sno and ULID masks: the C extension's equal the trusted edition's" "" "$(cmp "$MK_OUT/sno_trusted.csv" "$MK_OUT/sno_c.csv" 2>&1)"
check "each side unmasks the other's sno tokens and ULID masks" "10000|0|10000|0" \
  "$("${PSQL[@]}" -U postgres -d "$CDB" -At -c "CREATE TEMP TABLE t (i int, b text, p text, tok text, u uuid, m uuid, m3 uuid)" \
    -c "\\copy t FROM '$MK_OUT/sno_trusted.csv' CSV" \
    -c "SELECT count(*), count(*) FILTER (WHERE encode(sno_send(sno_unmask(tok, p)), 'hex') IS DISTINCT FROM b
          OR ulid_unmask(m::ulid)::uuid IS DISTINCT FROM u) FROM t")|$("${PSQL[@]}" -U "$OTHER" -d "$DB" -At \
    -c "CREATE TEMP TABLE t (i int, b text, p text, tok text, u uuid, m uuid, m3 uuid)" -c "\\copy t FROM '$MK_OUT/sno_c.csv' CSV" \
    -c "SELECT count(*), count(*) FILTER (WHERE encode(sno_unmask(tok, p), 'hex') IS DISTINCT FROM b
          OR ulid_unmask(m) IS DISTINCT FROM u OR ulid_unmask(m3, 3) IS DISTINCT FROM u) FROM t")"

# errors: C's SQLSTATE for the same input (tokens are equal on both sides)
tok=$(q "$OTHER" "$DB" 'SELECT snowflake_mask(42)')
tokp=$(q "$OTHER" "$DB" "SELECT snowflake_mask(42, 'ord')")
flip=$(q "$OTHER" "$DB" "SELECT overlay('$tok' PLACING CASE WHEN substr('$tok', 10, 1) = 'a' THEN 'b' ELSE 'a' END FROM 10 FOR 1)")
for e in "snowflake_unmask('$flip')" "snowflake_unmask('${tok:0:25}')" "snowflake_unmask('${tok}0')" \
  "snowflake_unmask('7zzzzzzzzzzzzzzzzzzzzzzzzz')" "snowflake_unmask('00000000000000000000000000')" \
  "snowflake_unmask('${tok:0:25}i')" "snowflake_unmask('${tok:0:25}u')" "snowflake_unmask('8${tok:1}')" \
  "snowflake_unmask('${tok:0:25}é')" "snowflake_unmask('')" "snowflake_unmask('_$tok')" "snowflake_unmask('ord__$tok')" \
  "snowflake_unmask('Or1_$tok')" "snowflake_unmask('$(printf 'a%.0s' $(seq 64))_$tok')" \
  "snowflake_unmask('$tokp')" "snowflake_unmask('$tokp', 'user')" "snowflake_unmask('$tok', 'ord')" \
  "snowflake_unmask('ord_$tok', 'ord')" "snowflake_unmask('$tokp', 'Ord')" "snowflake_unmask('$tokp', '_ord')" \
  "snowflake_mask(1, 'ord_')" "snowflake_mask(1, 'é')" "snowflake_mask(1, '$(printf 'a%.0s' $(seq 64))')" \
  "snowflake_mask(1, 'a1')" "sno_unmask('$tok')" "snowflake_unmask(replace('$tokp', 'ord_', 'user_'), 'user')"; do
  same_state "SELECT $e" "SELECT $e"
done
# and the same message, detail and hint where no key is named
mk_msgs=0
for e in "snowflake_unmask('${tok:0:25}é')" "snowflake_unmask('${tok:0:25}i')" "snowflake_unmask('8${tok:1}')" \
  "snowflake_unmask('$tokp')" "snowflake_unmask('$tokp', 'user')" "snowflake_unmask('$tok', 'ord')" \
  "snowflake_unmask('_$tok')" "snowflake_mask(1, 'é')"; do
  mine=$("${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "SELECT $e" 2>&1 | grep -E '^(ERROR|DETAIL|HINT):' || true)
  theirs=$("${PSQL[@]}" -U postgres -d "$CDB" -At -c "SELECT $e" 2>&1 | grep -E '^(ERROR|DETAIL|HINT):' || true)
  [ "$mine" = "$theirs" ] || { bad "$e: trusted \"$mine\", C \"$theirs\""; mk_msgs=1; }
done
[ $mk_msgs = 1 ] || ok "bad tokens and prefixes: the C extension's messages, details and hints"
same_state "SELECT sno_unmask(snowflake_mask(7))" "SELECT sno_unmask(snowflake_mask(7))"
same_state "SELECT snowflake_unmask(sno_mask('\\x0123456789abcdef0123'::bytea))" "SELECT snowflake_unmask(sno_mask('\\x0123456789abcdef0123'::sno))"
same_state "SELECT ulid_mask('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4051', 200)" "SELECT ulid_mask('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4051'::ulid, 200)"
judge_states "$DB"
check "sno_mask of 9 bytes: 22023" 22023 "$(sqlstate "$OTHER" "$DB" "SELECT sno_mask('\\x0123456789abcdef01'::bytea)")"
check "NULL in, NULL out (snowflake_mask, snowflake_unmask, sno_mask, ulid_mask)" "t|t|t|t" \
  "$(q "$OTHER" "$DB" "SELECT snowflake_mask(NULL) IS NULL, snowflake_unmask(NULL, 'ord') IS NULL, sno_mask(NULL) IS NULL, ulid_mask(NULL) IS NULL")"

# privileges: another role masks (above) but reads no key and changes none
check "another role cannot read snowflake_mask_keys: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT * FROM snowflake_mask_keys')"
check "another role cannot add a key: 42501" 42501 "$(sqlstate "$OTHER" "$DB" "SELECT snowflake_mask_key_add(5, '$MK_K2', true)")"
check "another role cannot remove a key: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_mask_key_remove(3)')"
check "another role cannot read the keys' fingerprint: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_mask_key_fingerprint()')"
check "no role but the owner (and superusers) may read snowflake_mask_keys" "" \
  "$(q postgres "$DB" "SELECT string_agg(rolname, ',') FROM pg_roles WHERE rolcanlogin AND NOT rolsuper AND rolname <> '$OWNER'
     AND has_table_privilege(oid, 'snowflake_mask_keys', 'SELECT')")"

# key_add and key_remove refuse bad input; one key stays active throughout
for bad_key in "-1, '$MK_K2'" "256, '$MK_K2'" "NULL, '$MK_K2'" "5, '${MK_K2:0:63}'" "5, '${MK_K2:0:63}g'" "5, '${MK_K2}00'" \
  "5, '$(printf '0%.0s' $(seq 64))'" "5, '6f3a1e0b9c2d4f5a7e8b1c3d5f7a9b0c2e4d6f8a1b3c5d7e9f0a2b4c6d8e0f1a'" \
  "5, '6F3A1E0B9C2D4F5A7E8B1C3D5F7A9B0C2E4D6F8A1B3C5D7E9F0A2B4C6D8E0F1A'" "5, NULL"; do
  check "snowflake_mask_key_add($bad_key): 22023" 22023 "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_mask_key_add($bad_key, true)")"
done
check "snowflake_mask_key_add of a taken id: 23505" 23505 "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_mask_key_add(3, '$MK_K2', true)")"
check "snowflake_mask_key_remove of an id that is not there: 22023" 22023 "$(sqlstate "$OWNER" "$DB" 'SELECT snowflake_mask_key_remove(4)')"
check "after the refused calls: key 3 alone, active" "3|t" "$(q "$OWNER" "$DB" 'SELECT key_id, active FROM snowflake_mask_keys')"

# rotation: key 9 active in both; key 3 stays to unmask
mask_key_file "3 $MK_K1" "9 $MK_K2 active"
q "$OWNER" "$DB" "SELECT snowflake_mask_key_add(9, '$MK_K2', true)" >/dev/null
check "after adding key 9 active: one active key, 9" "9" "$(q "$OWNER" "$DB" 'SELECT string_agg(key_id::text, $$,$$) FROM snowflake_mask_keys WHERE active')"
second=$(q "$OTHER" "$DB" 'SELECT snowflake_mask(1)')
if [ "$second" != "$first" ] && c_masks_like "$second"; then ok "both mask under the new active key, alike"; else
  bad "after the rotation: trusted $second, C $(q postgres "$CDB" 'SELECT snowflake_mask(1)' 2>&1) (before: $first)"; fi
check "after the rotation, both unmask the old tokens of the first 10,000 IDs; new tokens equal" "10000|0|0|0" \
  "$("${PSQL[@]}" -U postgres -d "$CDB" -At -c "CREATE TEMP TABLE t (i int, id bigint, p text, tok text, tokp text)" \
    -c "\\copy t FROM '$MK_OUT/trusted.csv' CSV" -c "DELETE FROM t WHERE i > 10000" \
    -c "\\copy (SELECT i, snowflake_mask(id, p) FROM t ORDER BY i) TO '$MK_OUT/new_c.csv' CSV" \
    -c "SELECT count(*), count(*) FILTER (WHERE snowflake_unmask(tokp, p) <> id) FROM t")|$("${PSQL[@]}" -U "$OTHER" -d "$DB" -At \
    -c "CREATE TEMP TABLE t (i int, id bigint, p text, tok text, tokp text)" -c "\\copy t FROM '$MK_OUT/c.csv' CSV" \
    -c "DELETE FROM t WHERE i > 10000" -c "CREATE TEMP TABLE n (i int, tok text)" -c "\\copy n FROM '$MK_OUT/new_c.csv' CSV" \
    -c "SELECT count(*) FILTER (WHERE snowflake_unmask(t.tokp, t.p) <> t.id), count(*) FILTER (WHERE snowflake_mask(t.id, t.p) <> n.tok)
        FROM t JOIN n USING (i)")"
check "the active key cannot be removed while key 3 remains: 55000" 55000 "$(sqlstate "$OWNER" "$DB" 'SELECT snowflake_mask_key_remove(9)')"
check "a taken id refused with active => true leaves key 9 active" "9" \
  "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_mask_key_add(3, '$MK_K2', true)" >/dev/null; q "$OWNER" "$DB" 'SELECT key_id FROM snowflake_mask_keys WHERE active')"
# key 3 removed from both: its tokens are refused alike
mask_key_file "9 $MK_K2 active"
q "$OWNER" "$DB" 'SELECT snowflake_mask_key_remove(3)' >/dev/null
for i in $(seq 1 600); do
  [ "$(sqlstate postgres "$CDB" "SELECT snowflake_unmask('$tok')")" = 22P02 ] && break
  sleep 0.1
done
same_state "SELECT snowflake_unmask('$tok')" "SELECT snowflake_unmask('$tok')"
judge_states "$DB"
check "after removing key 3: key 9 alone, active" "9|t" "$(q "$OWNER" "$DB" 'SELECT key_id, active FROM snowflake_mask_keys')"

# an install where pgcrypto is there already, in schema extensions (as on Supabase): bound at
# install. Known answers: docs/internals.md (tokens) and test/unit/mask_test.cpp (fingerprints)
q postgres postgres "CREATE DATABASE ${DB}_crypto OWNER $OWNER" >/dev/null
q "$OWNER" "${DB}_crypto" "CREATE SCHEMA extensions" "CREATE EXTENSION pgcrypto SCHEMA extensions" >/dev/null
"${PSQL[@]}" -U "$OWNER" -d "${DB}_crypto" -q -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null
check "pgcrypto there at install (schema extensions): the masks work at once; the first key is active" "t|2nyycqrb8qy0c3y64bpxpfwaj8|ord_7672ppc9b813scngte31j6w6er|3927f8e74db9cbac" \
  "$(q "$OWNER" "${DB}_crypto" "SELECT snowflake_mask_key_add(7, '$KAT_KEY')" >/dev/null
    q "$OWNER" "${DB}_crypto" "SELECT (SELECT active FROM snowflake_mask_keys), snowflake_mask(1234), snowflake_mask(1234, 'ord'), snowflake_mask_key_fingerprint()")"
check "known answers (docs/internals.md): sno tokens, the ULID mask, unmasking" \
  "11qr49kev0swky1w4k6ecsnex8|ord_14see1s003xx2aq0bpt465tsv9|49f49c04-12d6-85a5-437d-b77348deff05|1234|0123456789abcdef0123" \
  "$(q "$OTHER" "${DB}_crypto" "SELECT sno_mask('\\x0123456789abcdef0123'), sno_mask('\\x0123456789abcdef0123', 'ord'),
    ulid_mask('0190a1b2c3d47e5f8a9b0c1d2e3f4051'), snowflake_unmask('ORD_7672PPC9B813SCNGTE31J6W6ER', 'ord'),
    encode(sno_unmask('ord_14see1s003xx2aq0bpt465tsv9', 'ord'), 'hex')")"
q "$OWNER" "${DB}_crypto" "SELECT snowflake_mask_key_add(0, 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100', true)" >/dev/null
check "known answer (test/unit/mask_test.cpp): the fingerprint of key 0 active and key 7" 5ef46c282fd7601e \
  "$(q "$OWNER" "${DB}_crypto" 'SELECT snowflake_mask_key_fingerprint()')"
q "$OWNER" "${DB}_crypto" "SELECT snowflake_mask_key_remove(7)" "SELECT snowflake_mask_key_remove(0)" \
  "SELECT snowflake_mask_key_add(0, '$KAT_KEY')" >/dev/null
check "known answer (docs/internals.md): the key as id 0, ID -1, prefix user" user_0t05wzhhgq2vh15pypt6hs8aaa \
  "$(q "$OTHER" "${DB}_crypto" "SELECT snowflake_mask(-1, 'user')")"
check_objects "${DB}_crypto"

# ns per ID, $N IDs in one statement (the trusted edition as another role)
mk_ms() {  # mk_ms ROLE DB SQL: the statement's milliseconds
  "${PSQL[@]}" -U "$1" -d "$2" -At -c '\timing on' -c "$3" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
mk_ns() { awk -v ms="$1" -v n="$N" 'BEGIN { printf "%.0f", ms * 1e6 / n }'; }
MK_M="SELECT sum(length(snowflake_mask(i))) FROM generate_series(1, $N) i"
MK_MP="SELECT sum(length(snowflake_mask(i, 'ord'))) FROM generate_series(1, $N) i"
MK_U="SELECT count(snowflake_unmask(tok)) FROM (SELECT snowflake_mask(i) AS tok FROM generate_series(1, $N) i OFFSET 0) s"
mk_ms "$OTHER" "$DB" "$MK_M" >/dev/null
mk_ms postgres "$CDB" "$MK_M" >/dev/null
tm=$(mk_ns "$(mk_ms "$OTHER" "$DB" "$MK_M")")
cm=$(mk_ns "$(mk_ms postgres "$CDB" "$MK_M")")
tmp=$(mk_ns "$(mk_ms "$OTHER" "$DB" "$MK_MP")")
cmp_=$(mk_ns "$(mk_ms postgres "$CDB" "$MK_MP")")
tu=$(( $(mk_ns "$(mk_ms "$OTHER" "$DB" "$MK_U")") - tm ))
cu=$(( $(mk_ns "$(mk_ms postgres "$CDB" "$MK_U")") - cm ))
echo "(snowflake_mask, ns per ID over $N IDs: trusted $tm, C $cm; with a prefix: trusted $tmp, C $cmp_; snowflake_unmask (one key): trusted $tu, C $cu)"
