# Sourced by test/trusted/run.sh (section 7): the other kinds' decoders, bounds and text, and TypeID.
# Each bulk check makes its values in the trusted edition (trusted_db, as $OTHER), copies them
# with the trusted results to a file, and the C extension (c_db, as postgres) reads them back
# and counts the rows where its own result differs: one query per kind.
KN=100000
# files go to $DIR/out: that directory is the server user's, who removes them at the next run
KOUT=$DIR/out

# kinds_bulk NAME TRUSTED_SETUP TRUSTED_SELECT C_COLUMNS C_MISMATCH [EXPECTED]: TRUSTED_SETUP
# makes the temp table v in trusted_db, TRUSTED_SELECT's rows go to NAME.csv, and in c_db the
# table g (C_COLUMNS) holds them; C_MISMATCH is the condition of a row the C extension reads
# otherwise. The check wants "rows|0" (EXPECTED: the row count, $KN by default).
kinds_bulk() {
  local name=$1 setup=$2 select=$3 columns=$4 mismatch=$5 want=${6:-$KN} res
  "${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "$setup" -c "\\copy ($select) TO '$KOUT/kinds_$name.csv' CSV" ||
    bad "$name: the trusted edition failed on these values"
  res=$("${PSQL[@]}" -U postgres -d "$CDB" -At -c "CREATE TEMP TABLE g ($columns)" \
    -c "\\copy g FROM '$KOUT/kinds_$name.csv' CSV" \
    -c "SELECT count(*), count(*) FILTER (WHERE $mismatch) FROM g" || true)
  check "$name: $want values, the C extension reads each as the trusted edition does" "$want|0" "$res"
}

# random bytes of a length, made in SQL (md5 of random(): test values, not IDs)
rand_bytes() { echo "decode(substr(md5(i::text || random()::text) || md5(random()::text), 1, $(($1 * 2))), 'hex')"; }

# 7a. sno, rsxid, ksuid kept as bytea: text both ways, timestamp, decode (bytea and text forms);
# random bytes, all zeros, all 0xff and the bounds at both ends of the kind's time
# kind_bulk KIND BYTES FIRST_TIME LAST_TIME C_EXTRA_MISMATCH
kind_bulk() {
  local kind=$1 n=$2 first=$3 last=$4 extra=$5
  kinds_bulk "$kind" \
    "CREATE TEMP TABLE v AS SELECT i, CASE i WHEN 1 THEN decode(repeat('00', $n), 'hex') WHEN 2 THEN decode(repeat('ff', $n), 'hex')
       WHEN 3 THEN ${kind}_at('$first') WHEN 4 THEN ${kind}_at('$last') ELSE $(rand_bytes "$n") END AS b
     FROM generate_series(1, $KN) i" \
    "SELECT i, encode(b, 'hex'), ${kind}_to_text(b), ${kind}_timestamp(b), ${kind}_decode(b)::text,
       ${kind}_timestamp(${kind}_to_text(b)), ${kind}_decode(${kind}_to_text(b))::text, encode(text_to_${kind}(${kind}_to_text(b)), 'hex')
     FROM v" \
    "i int, hex text, my_text text, my_ts timestamptz, my_dec text, my_ts_text timestamptz, my_dec_text text, my_rt text" \
    "(SELECT c::text IS DISTINCT FROM my_text OR ${kind}_timestamp(c) IS DISTINCT FROM my_ts
        OR ${kind}_decode(c)::text IS DISTINCT FROM my_dec OR my_ts_text IS DISTINCT FROM my_ts
        OR my_dec_text IS DISTINCT FROM my_dec OR my_rt IS DISTINCT FROM hex OR my_text::$kind <> c $extra
      FROM (SELECT bytea_to_${kind}(decode(hex, 'hex')) AS c) x)"
}
kind_bulk sno 10 '2010-01-01 00:00:00+00' '2079-09-07 15:47:35.551999+00' ""
kind_bulk rsxid 12 '1970-01-01 00:00:00+00' '2106-02-07 06:28:15.999999+00' ""
kind_bulk ksuid 20 '2014-05-13 16:53:20+00' '2150-06-19 23:21:35.999999+00' ""
# a sno also reads from bytea's hex text, in either case (what pgx sends for muyo/sno's value)
check "sno: text_to_sno of bytea's hex text, either case, as C's sno input" \
  "$(q postgres "$CDB" "SELECT encode(sno_to_bytea('\\x0123456789ABCDEFabcd'::sno), 'hex'), encode(sno_to_bytea('6ncg4s4cr5wwi222'::sno), 'hex')")" \
  "$(q "$OTHER" "$DB" "SELECT encode(text_to_sno('\\x0123456789ABCDEFabcd'), 'hex'), encode(text_to_sno('6ncg4s4cr5wwi222'), 'hex')")"

# 7b. other systems' 64-bit IDs: random positive bigints (every bit drawn) and the edges
kinds_bulk layouts \
  "CREATE TEMP TABLE v AS SELECT i, CASE i WHEN 1 THEN 0 WHEN 2 THEN 9223372036854775807 WHEN 3 THEN 4194303 WHEN 4 THEN 4194304
     WHEN 5 THEN 16777216 ELSE ((random() * 2147483647)::bigint << 32) | (random() * 4294967295)::bigint END AS id
   FROM generate_series(1, $KN) i" \
  "SELECT i, id, twitter_decode(id)::text, discord_decode(id)::text, sonyflake_decode(id)::text, pgedge_decode(id)::text,
     pgedge_decode(id, 'pgedge_1_1')::text, snowflake_decode(id, 'twitter')::text, snowflake_decode(id, 'Discord')::text,
     snowflake_decode(id, 'sonyflake')::text, snowflake_decode(id, 'pgedge')::text, snowflake_decode(id, 'pgedge_1_1')::text,
     snowflake_decode(id, 'instagram')::text FROM v" \
  "i int, id bigint, tw text, di text, so text, pg text, pg11 text, l_tw text, l_di text, l_so text, l_pg text, l_pg11 text, l_in text" \
  "twitter_decode(id)::text IS DISTINCT FROM tw OR discord_decode(id)::text IS DISTINCT FROM di
   OR sonyflake_decode(id)::text IS DISTINCT FROM so OR pgedge_decode(id)::text IS DISTINCT FROM pg
   OR pgedge_decode(id, 'pgedge_1_1')::text IS DISTINCT FROM pg11 OR snowflake_decode(id, 'twitter')::text IS DISTINCT FROM l_tw
   OR snowflake_decode(id, 'Discord')::text IS DISTINCT FROM l_di OR snowflake_decode(id, 'sonyflake')::text IS DISTINCT FROM l_so
   OR snowflake_decode(id, 'pgedge')::text IS DISTINCT FROM l_pg OR snowflake_decode(id, 'pgedge_1_1')::text IS DISTINCT FROM l_pg11
   OR snowflake_decode(id, 'instagram')::text IS DISTINCT FROM l_in"

# MongoDB ObjectIds: 12 random bytes (and the edges), as bytea and as hex text of either case
kinds_bulk objectid \
  "CREATE TEMP TABLE v AS SELECT i, CASE i WHEN 1 THEN decode(repeat('00', 12), 'hex') WHEN 2 THEN decode(repeat('ff', 12), 'hex')
     ELSE $(rand_bytes 12) END AS b FROM generate_series(1, $KN) i" \
  "SELECT i, encode(b, 'hex'), objectid_decode(b)::text, objectid_decode(upper(encode(b, 'hex')))::text, objectid_timestamp(b),
     objectid_timestamp(encode(b, 'hex')) FROM v" \
  "i int, hex text, dec_b text, dec_t text, ts_b timestamptz, ts_t timestamptz" \
  "objectid_decode(decode(hex, 'hex'))::text IS DISTINCT FROM dec_b OR objectid_decode(upper(hex))::text IS DISTINCT FROM dec_t
   OR objectid_timestamp(decode(hex, 'hex')) IS DISTINCT FROM ts_b OR objectid_timestamp(hex) IS DISTINCT FROM ts_t"

# 7c. TypeID: random UUIDs (and the nil, max and a version 7 one) under prefixes of every shape
kinds_bulk typeid \
  "CREATE TEMP TABLE v AS SELECT i, (ARRAY['user', '', 'a', 'a_b__c', repeat('z', 63)])[i % 5 + 1] AS p,
     CASE i WHEN 1 THEN '00000000-0000-0000-0000-000000000000'::uuid WHEN 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
       WHEN 3 THEN '01890a5d-ac96-774b-bcce-b302099a8057' ELSE gen_random_uuid() END AS u FROM generate_series(1, $KN) i" \
  "SELECT i, p, u, typeid(p, u), typeid_uuid(typeid(p, u)), typeid_prefix(typeid(p, u)) FROM v" \
  "i int, p text, u uuid, my_t text, my_u uuid, my_p text" \
  "typeid(p, u) IS DISTINCT FROM my_t OR typeid_uuid(my_t) IS DISTINCT FROM u OR my_u IS DISTINCT FROM u
   OR typeid_prefix(my_t) IS DISTINCT FROM p OR my_p IS DISTINCT FROM p"
check "typeid: the specification's example (user_01h455vb4pex5vsknk084sn02q)" "user_01h455vb4pex5vsknk084sn02q|01890a5d-ac96-774b-bcce-b302099a8057|user" \
  "$(q "$OTHER" "$DB" "SELECT typeid('user', '01890a5d-ac96-774b-bcce-b302099a8057'), typeid_uuid('user_01h455vb4pex5vsknk084sn02q'), typeid_prefix('user_01h455vb4pex5vsknk084sn02q')")"

# 7d. bounds: both ends of each kind's and layout's time (to the microsecond) and 10,000 random
# times within it
kinds_bulk bounds \
  "CREATE TEMP TABLE v AS WITH r(kind, first_ms, last_ms) AS (VALUES ('sno', 1262304000000, 3461327255551),
       ('rsxid', 0, 4294967295999), ('ksuid', 1400000000000, 5694967295999), ('twitter', 1288834974657, 1288834974657 + (1::bigint << 41) - 1),
       ('discord', 1420070400000, 1420070400000 + (1::bigint << 41) - 1), ('sonyflake', 1409529600000, 1409529600000 + (1::bigint << 39) * 10 - 1),
       ('pgedge', 1672531200000, 1672531200000 + (1::bigint << 41) - 1), ('pgedge_1_1', 1672531200000, 1672531200000 + (1::bigint << 41) - 1),
       ('instagram', 1314220021721, 1314220021721 + (1::bigint << 40) - 1))
     SELECT kind, timestamptz 'epoch' + ms * interval '1 millisecond' + us * interval '1 microsecond' AS t
       FROM r, LATERAL (VALUES (first_ms, 0), (first_ms, 999), (last_ms, 0), (last_ms, 999), (last_ms - 1, 999)) e(ms, us)
     UNION ALL
     SELECT kind, timestamptz 'epoch' + (first_ms + (random() * (last_ms - first_ms))::bigint) * interval '1 millisecond'
       + (random() * 999)::integer * interval '1 microsecond' FROM r, generate_series(1, 10000 / 9)" \
  "SELECT kind, t, CASE kind WHEN 'sno' THEN encode(sno_at(t), 'hex') WHEN 'rsxid' THEN encode(rsxid_at(t), 'hex')
     WHEN 'ksuid' THEN encode(ksuid_at(t), 'hex') ELSE snowflake_at(t, kind)::text END FROM v" \
  "kind text, t timestamptz, mine text" \
  "mine IS DISTINCT FROM CASE kind WHEN 'sno' THEN encode(sno_to_bytea(sno_at(t)), 'hex') WHEN 'rsxid' THEN encode(rsxid_to_bytea(rsxid_at(t)), 'hex')
     WHEN 'ksuid' THEN encode(ksuid_to_bytea(ksuid_at(t)), 'hex') ELSE snowflake_at(t, kind)::text END" \
  $((9 * 5 + 9 * (10000 / 9)))

# 7e. the 128-bit kinds at a time: the millisecond as C's, the version and variant, and every
# random hexadecimal digit taking all 16 values (none fixed, none copied from the UUID's
# version or variant)
kinds_bulk from_time \
  "CREATE TEMP TABLE v AS SELECT i, CASE i WHEN 1 THEN timestamptz '1970-01-01 00:00:00+00' WHEN 2 THEN '10889-08-02 05:31:50.655999+00'
     ELSE timestamptz 'epoch' + (random() * 281474976710655)::bigint * interval '1 millisecond' + (random() * 999)::integer * interval '1 microsecond' END AS t
   FROM generate_series(1, $KN) i" \
  "SELECT i, t, uuidv7_from_time(t), ulid_from_time(t) FROM v" \
  "i int, t timestamptz, u7 uuid, ul uuid" \
  "uuidv7_timestamp(u7) IS DISTINCT FROM uuidv7_timestamp(uuidv7_from_time(t)) OR uuid_extract_version(u7) IS DISTINCT FROM 7
   OR ulid_timestamp(ul::ulid) IS DISTINCT FROM ulid_timestamp(ulid_from_time(t))"
check "uuidv7_from_time, ulid_from_time: $KN distinct each; every random digit takes its 16 values (the variant's, 4)" "$KN|$KN|t|t" \
  "$(q postgres "$CDB" "CREATE TEMP TABLE g (i int, t timestamptz, u7 uuid, ul uuid)" "\\copy g FROM '$KOUT/kinds_from_time.csv' CSV" \
    "SELECT count(DISTINCT u7), count(DISTINCT ul),
       (SELECT bool_and(n = CASE k WHEN 16 THEN 4 ELSE 16 END) FROM (SELECT k, count(DISTINCT substr(replace(u7::text, '-', ''), k + 1, 1)) n
          FROM g, generate_series(13, 31) k GROUP BY k) d),
       (SELECT bool_and(n = 16) FROM (SELECT k, count(DISTINCT substr(replace(ul::text, '-', ''), k + 1, 1)) n
          FROM g, generate_series(12, 31) k GROUP BY k) d) FROM g")"

# snowflake_uuidv7(shift): the clock's millisecond shifted (a month counted in the session's time
# zone), version 7, RFC 9562's variant, read by the C extension; out of range, C's SQLSTATE
u7_shifted=$(q "$OTHER" "$DB" "SET timezone = 'UTC'" "SELECT string_agg(format('(%L::interval, %L::timestamptz, %L::uuid, %L::timestamptz)',
    s, t0, u, t1), ', ') FROM (SELECT s, clock_timestamp() t0, snowflake_uuidv7(s::interval) u, clock_timestamp() t1
    FROM unnest(ARRAY['0', '-1 day', '1 month 2 hours', '-45 years', '8000 years', '-3 ms']) s) x")
check "snowflake_uuidv7(shift): version 7 at the clock shifted, as the C extension reads it" "6|6|6" \
  "$(q postgres "$CDB" "SET timezone = 'UTC'" "SELECT count(*), count(*) FILTER (WHERE uuid_extract_version(u) = 7 AND substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')),
     count(*) FILTER (WHERE uuidv7_timestamp(u) BETWEEN date_trunc('milliseconds', t0 + s) AND t1 + s) FROM (VALUES $u7_shifted) v(s, t0, u, t1)")"
same_state "SELECT snowflake_uuidv7(interval '9000 years')" "SELECT snowflake_uuidv7(interval '9000 years')"
same_state "SELECT snowflake_uuidv7(interval '-60 years')" "SELECT snowflake_uuidv7(interval '-60 years')"
same_state "SELECT snowflake_uuidv7(interval '290000 years')" "SELECT snowflake_uuidv7(interval '290000 years')"
check "snowflake_uuidv7(NULL) is NULL" t "$(q "$OTHER" "$DB" 'SELECT snowflake_uuidv7(NULL) IS NULL')"

# 7f. from search_path = pg_catalog, schema-qualified: each function, and an error path of each
# PL/pgSQL helper (which must not resolve names of this schema in the caller's path)
check "the other kinds' functions, schema-qualified, from search_path = pg_catalog" \
  "6ncg4s4cr5wwi222|2020-02-29 12:34:56.788+00|200|9m4e2mr0ui3e8a215n4g|58408|0ujtsYcgvSTl8PAuAdqWYSMnLOv|\\xb5a1cd34b5f99d1154fb6853345c9735|t|t|t|1|11|32|0|1023|15229162|2012-10-17 20:46:22+00|user_01h455vb4pex5vsknk084sn02q|user|01890a5d-ac96-774b-bcce-b302099a8057|2024-01-01 00:00:00+00|2024-01-01 00:00:00+00|495021824409600000" \
  "$(q "$OTHER" "$DB" "SET search_path = pg_catalog" "SET timezone = 'UTC'" "SELECT public.sno_to_text(public.text_to_sno('6ncg4s4cr5wwi222')),
     public.sno_timestamp('6ncg4s4cr5wwi222'::text), (public.sno_decode('6ncg4s4cr5wwi222'::text)).meta,
     public.rsxid_to_text(public.text_to_rsxid('9m4e2mr0ui3e8a215n4g')), (public.rsxid_decode('9m4e2mr0ui3e8a215n4g'::text)).pid,
     public.ksuid_to_text(public.text_to_ksuid('0ujtsYcgvSTl8PAuAdqWYSMnLOv')), (public.ksuid_decode('0ujtsYcgvSTl8PAuAdqWYSMnLOv'::text)).payload,
     public.sno_at(now()) IS NOT NULL, public.rsxid_at(now()) IS NOT NULL, public.ksuid_at(now()) < public.ksuid_at(now() + interval '1 second'),
     (public.discord_decode(175928847299117063)).worker, (public.twitter_decode(1541815603606036480)).datacenter,
     (public.snowflake_decode(175928847299117063, 'discord')).shard, (public.sonyflake_decode(0)).seq,
     (public.pgedge_decode(1023, 'pgedge_1_1')).node, (public.objectid_decode('507f191e810c19729de860ea'::text)).counter,
     public.objectid_timestamp('\\x507f191e810c19729de860ea'::bytea), public.typeid('user', '01890a5d-ac96-774b-bcce-b302099a8057'),
     public.typeid_prefix('user_01h455vb4pex5vsknk084sn02q'), public.typeid_uuid('user_01h455vb4pex5vsknk084sn02q'),
     public.uuidv7_timestamp(public.uuidv7_from_time('2024-01-01 00:00:00.0009+00')), public.ulid_timestamp(public.ulid_from_time('2024-01-01 00:00:00+00')),
     public.snowflake_at('2024-01-07 00:00+00', 'sonyflake')")"
kinds_path_states=""
for e in "public.text_to_sno('x')" "public.text_to_rsxid('x')" "public.text_to_ksuid('x')" "public.sno_to_text('\\x00'::bytea)" \
  "public.ksuid_at('infinity')" "public.twitter_decode(-1)" "public.pgedge_decode(1, 'twitter')" "public.snowflake_decode(1, 'nope')" \
  "public.objectid_timestamp('x'::text)" "public.typeid('A', gen_random_uuid())" "public.typeid_uuid('x')"; do
  kinds_path_states+="$(sqlstate "$OTHER" "$DB" "SET search_path = pg_catalog; SELECT $e") "
done
check "their errors, schema-qualified, from search_path = pg_catalog" \
  "22P02 22P02 22P02 22P03 22008 22003 22023 22023 22P02 22P02 22P02 " "$kinds_path_states"

# The functions of one value are inlined into the caller's query (a SQL function called as a
# function sets up an executor at each call): the plan calls no SQL function of ours,
# only the PL/pgSQL ones that raise, check a time or do the base32 and base62 arithmetic.
check "the functions of one value are inlined: the plan calls only PL/pgSQL functions of ours" "" \
  "$("${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "CREATE TEMP TABLE w (b10 bytea, b12 bytea, b20 bytea, t text, u uuid, ts timestamptz)" \
    -c "EXPLAIN VERBOSE SELECT sno_to_text(b10), text_to_sno(t), sno_timestamp(b10), sno_timestamp(t), sno_at(ts), rsxid_to_text(b12),
          text_to_rsxid(t), rsxid_timestamp(b12), rsxid_timestamp(t), rsxid_at(ts), ksuid_to_text(b20), text_to_ksuid(t),
          ksuid_timestamp(b20), ksuid_timestamp(t), ksuid_at(ts), objectid_timestamp(b12), objectid_timestamp(t), typeid(t, u),
          typeid_uuid(t), typeid_prefix(t), uuidv7_from_time(ts), ulid_from_time(ts) FROM w" |
    grep -oE '\b[a-z0-9_]+\(' | sort -u |
    grep -vxE '(snowflake_bad_length|snowflake_bad_text|snowflake_ms_within|snowflake_base32_encode|snowflake_base32_decode|snowflake_ksuid_encode|snowflake_ksuid_decode|snowflake_unix_ms48)\(' |
    grep -E '^(sno|rsxid|ksuid|objectid|typeid|text_to|uuidv7|ulid|snowflake)_?' | tr '\n' ' ')"

# 7g. bad input: the C extension's SQLSTATE, and for bad text (22P02) its message and DETAIL
# too (same_state and judge_states, test/trusted/run.sh)
for t in '' 6ncg4s4cr5wwi22 6ncg4s4cr5wwi2222 6NCG4S4CR5WWI222 6ncg4s4cr5wwi221 6ncg4s4cr5wwi22y 'é6ncg4s4cr5wwi22' \
  '6ncg 4s4cr5wwi22' '\x0123456789abcdef012' '\x0123456789abcdef012g' '\X0123456789abcdef0123'; do
  same_state "SELECT text_to_sno('$t')" "SELECT '$t'::sno"
done
for t in '' 9m4e2mr0ui3e8a215n4 9m4e2mr0ui3e8a215n4g0 9M4E2MR0UI3E8A215N4G 9m4e2mr0ui3e8a215nwg 9m4e2mr0ui3e8a215n4h \
  9m4e2mr0ui3e8a215n41 'é9m4e2mr0ui3e8a215n4'; do
  same_state "SELECT text_to_rsxid('$t')" "SELECT '$t'::rsxid"
  same_state "SELECT rsxid_timestamp('$t'::text)" "SELECT rsxid_timestamp('$t'::text)"
done
for t in '' 0ujtsYcgvSTl8PAuAdqWYSMnLO 0ujtsYcgvSTl8PAuAdqWYSMnLOv0 0ujtsYcgvSTl8PAuAdqWYSMnLO- aWgEPTl1tmebfsQzFP4bxwgy80W \
  zzzzzzzzzzzzzzzzzzzzzzzzzzz 'é0ujtsYcgvSTl8PAuAdqWYSMnL'; do
  same_state "SELECT text_to_ksuid('$t')" "SELECT '$t'::ksuid"
  same_state "SELECT ksuid_decode('$t'::text)" "SELECT ksuid_decode('$t'::text)"
done
for n in 0 9 11 19 21; do
  same_state "SELECT sno_to_text(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_sno(decode(repeat('00', $n), 'hex'))"
done
same_state "SELECT sno_timestamp(decode(repeat('00', 11), 'hex'))" "SELECT bytea_to_sno(decode(repeat('00', 11), 'hex'))"
same_state "SELECT sno_decode(decode(repeat('00', 9), 'hex'))" "SELECT bytea_to_sno(decode(repeat('00', 9), 'hex'))"
for n in 0 11 13; do
  same_state "SELECT rsxid_to_text(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_rsxid(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT rsxid_decode(decode(repeat('00', $n), 'hex'))" "SELECT rsxid_decode(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT rsxid_timestamp(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_rsxid(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT objectid_decode(decode(repeat('00', $n), 'hex'))" "SELECT objectid_decode(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT objectid_timestamp(decode(repeat('00', $n), 'hex'))" "SELECT objectid_timestamp(decode(repeat('00', $n), 'hex'))"
done
for n in 0 19 21; do
  same_state "SELECT ksuid_to_text(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_ksuid(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT ksuid_timestamp(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_ksuid(decode(repeat('00', $n), 'hex'))"
  same_state "SELECT ksuid_decode(decode(repeat('00', $n), 'hex'))" "SELECT bytea_to_ksuid(decode(repeat('00', $n), 'hex'))"
done
for t in '' 507f191e810c19729de860e 507f191e810c19729de860eaa 507f191e810c19729de860eg 'é07f191e810c19729de860ea'; do
  same_state "SELECT objectid_decode('$t'::text)" "SELECT objectid_decode('$t'::text)"
  same_state "SELECT objectid_timestamp('$t'::text)" "SELECT objectid_timestamp('$t'::text)"
done
for e in "sno_at('infinity')" "sno_at('-infinity')" "sno_at('2009-12-31 23:59:59.999999+00')" "sno_at('2079-09-07 15:47:35.552+00')" \
  "rsxid_at('infinity')" "rsxid_at('1969-12-31 23:59:59.999999+00')" "rsxid_at('2106-02-07 06:28:16+00')" \
  "ksuid_at('-infinity')" "ksuid_at('2014-05-13 16:53:19.999999+00')" "ksuid_at('2150-06-19 23:21:36+00')" \
  "uuidv7_from_time('infinity')" "uuidv7_from_time('1969-12-31 23:59:59.999+00')" "uuidv7_from_time('10889-08-02 05:31:50.656+00')" \
  "ulid_from_time('-infinity')" "ulid_from_time('1969-12-31 23:59:59.999+00')" "ulid_from_time('10889-08-02 05:31:50.656+00')" \
  "twitter_decode(-1)" "discord_decode(-9223372036854775808)" "sonyflake_decode(-1)" "pgedge_decode(-1)" "pgedge_decode(-1, 'PGEDGE_1_1')" \
  "pgedge_decode(1, 'twitter')" "pgedge_decode(-1, 'nope')" "pgedge_decode(1, 'pgedge ')" "snowflake_decode(1, 'nope')" "snowflake_decode(-1, 'twitter')" \
  "snowflake_at(now(), 'nope')" "snowflake_at('2010-11-04 01:42:54.656+00', 'twitter')" "snowflake_at('infinity', 'discord')" \
  "snowflake_at('2188-11-16 03:28:58.88+00', 'sonyflake')" "snowflake_at('2092-09-06 15:47:35.552+00', 'pgedge')"; do
  same_state "SELECT $e" "SELECT $e"
done
for p in User user1 _user user_ "$(printf 'a%.0s' $(seq 64))" 'usér' ' user' 'a-b'; do
  same_state "SELECT typeid('$p', '01890a5d-ac96-774b-bcce-b302099a8057')" "SELECT typeid('$p', '01890a5d-ac96-774b-bcce-b302099a8057')"
done
for t in '' _01h455vb4pex5vsknk084sn02q user_01H455VB4PEX5VSKNK084SN02Q user_81h455vb4pex5vsknk084sn02q \
  user_01h455vb4pex5vsknk084sn02 user_01h455vb4pex5vsknk084sn02qq user_01h455vb4pex5vsknk084sn0iq User_01h455vb4pex5vsknk084sn02q \
  user-01h455vb4pex5vsknk084sn02q user__01h455vb4pex5vsknk084sn02q _user_01h455vb4pex5vsknk084sn02q "$(printf 'a%.0s' $(seq 64))_01h455vb4pex5vsknk084sn02q" \
  'user_01h455vb4pex5vsknk084sn0é' 01h455vb4pex5vsknk084sn02 'user 01h455vb4pex5vsknk084sn02q'; do
  same_state "SELECT typeid_uuid('$t')" "SELECT typeid_uuid('$t')"
  same_state "SELECT typeid_prefix('$t')" "SELECT typeid_prefix('$t')"
done
judge_states "$DB" messages
check "bad text: the trusted message and DETAIL equal the C extension's (of more than 80 compared)" "0 t" \
  "$states_messages_differ $([ "$states_messages_compared" -gt 80 ] && echo t || echo "f: $states_messages_compared")"
