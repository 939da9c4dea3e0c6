#!/usr/bin/env bash
# The trusted edition (trusted/, docs/managed.md) on a throwaway server with NO library of ours
# preloaded, installed by a database owner who is not a superuser with psql -f, and judged by
# the C extension (CREATE EXTENSION snowflake by the superuser in another database of the same
# server: its decoders work without the preload).
#   1. The committed installers are what trusted/build.sh generates from the one source.
#   2. The install and the roles: the owner is no superuser, nothing is LANGUAGE c, every
#      object has a comment; before snowflake_configure, snowflake() refuses with 55000; bad
#      configuration is 22023, a new epoch after the first ID 55000; another role may generate
#      and decode (also schema-qualified from search_path = pg_catalog) but may not configure,
#      setval the counters or call the generator writer (42501); snowflake() is inlined.
#   3. 100,000 IDs of each kind (snowflake, UUIDv7, ULID) in one call, read by the C
#      extension: shard 5, the time within the call (from max_lag_ms before it to the burst's
#      lead after it), strictly increasing in issue order; the trusted decoders, bounds and
#      ULID text give what the C extension's give, for these IDs and for edge values.
#   4. 8 concurrent sessions x 100,000 snowflake() in bursts, then 8 x 5,000 single
#      statements with max_lag_ms = 1 (a catch-up every millisecond or so, racing the
#      others): no duplicate, each session's IDs increasing.
#   5. An immediate stop (a crash), then a start with the clock 10 minutes behind
#      (libfaketime): every new ID of each kind above every old one, and no wait. (IDs of a
#      transaction still open at the crash may come again: reported, not asserted.)
#   6. Bad input: each trusted function's SQLSTATE is the C extension's for the same input
#      (each side's statements in one session, each in a subtransaction of its own).
#   7. the other kinds' decoders, bounds, text and TypeID, and snowflake_uuidv7(shift)
#      (test/trusted/kinds.sh); 8. the masks (test/trusted/mask.sh: pgcrypto, keys added by
#      the owner; the C extension's key file written to $SERVER_DATA/mask.keys and named with
#      ALTER SYSTEM), judged by the C extension on the same server.
#   8b. A standby (pg_basebackup, streaming), its clock behind: the generators refuse with
#      25006, what reads works; then its promotion: every new ID above every old one, no wait.
#   9 to 12. test/trusted/pg_tle.sh: the pg_tle installer, on a server that preloads pg_tle,
#      where pg_tle is installed for this major (else one line says that it skips, and why).
# Usage: test/trusted/run.sh (as root, or as a user that can run PostgreSQL). The installed C
# extension is used as it is with SNOWFLAKE_TRUSTED_NO_BUILD=1; else it is built and installed
# first, as every suite does (take /tmp/snowflake-test.lock around it).
source "$(dirname "$0")/../../scripts/common.sh"

install_packages libfaketime
installed_only
ensure_server_user
prepare_work
[ -n "${SNOWFLAKE_TRUSTED_NO_BUILD:-}" ] || build_and_install

DIR=$WORK/trusted
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR/out"
# No library of ours preloaded: the later line wins over start_server's.
start_server "$DIR" "${SNOWFLAKE_TRUSTED_PORT:-54393}" <<'CONF'
shared_preload_libraries = ''
max_connections = 40
track_functions = 'pl'
CONF
trap 'as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m immediate stop >/dev/null 2>&1 || true' EXIT

OWNER=tr_owner
OTHER=tr_other
DB=trusted_db
CDB=c_db
failed=0
ok() { echo "ok: $1"; }
bad() { echo "not ok: $1"; failed=1; }
check() {  # check WHAT EXPECTED GOT
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got \"$3\", expected \"$2\""; fi
}
# q ROLE DB SQL...: the rows, unaligned
q() {
  local role=$1 db=$2
  shift 2
  local args=() s
  for s in "$@"; do args+=(-c "$s"); done
  "${PSQL[@]}" -U "$role" -d "$db" -At "${args[@]}"
}
# sqlstate ROLE DB SQL: the SQLSTATE the statement fails with, or "none"
sqlstate() {
  local out
  out=$("${PSQL[@]}" -U "$1" -d "$2" -At -v VERBOSITY=sqlstate -c "$3" 2>&1 >/dev/null) && {
    echo none
    return
  }
  sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\).*/\1/p' <<<"$out" | head -n 1
}
# errors_of ROLE DB SQL...: a line for each query, in order: "none" when it succeeds, else its
# SQLSTATE, message and DETAIL, separated by tabs (the queries are dollar-quoted: none may hold
# $snowflake_test$). A query that succeeds is rolled back by raising SFOK0, which no server
# raises.
errors_of() {
  local role=$1 db=$2 s list=""
  shift 2
  for s in "$@"; do list+="${list:+, }\$snowflake_test\$$s\$snowflake_test\$"; done
  "${PSQL[@]}" -U "$role" -d "$db" -At -f - <<SQL
SET client_min_messages = error;
CREATE FUNCTION pg_temp.errors_of(stmts text[]) RETURNS SETOF text LANGUAGE plpgsql AS \$f\$
DECLARE
  s text;
  out text;
  st text;
  msg text;
  det text;
BEGIN
  FOREACH s IN ARRAY stmts LOOP
    BEGIN
      EXECUTE format('SELECT string_agg(q::text, '','') FROM (%s) q', s) INTO out;
      RAISE SQLSTATE 'SFOK0';
    EXCEPTION WHEN SQLSTATE 'SFOK0' THEN
      RETURN NEXT 'none';
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
      RETURN NEXT st || E'\t' || translate(msg, E'\n\t', '  ') || E'\t' || translate(det, E'\n\t', '  ');
    END;
  END LOOP;
END
\$f\$;
SELECT pg_temp.errors_of(ARRAY[$list]::text[]);
SQL
}

# 1. the committed installer is the generated one
if "$ROOT/trusted/build.sh" --check; then ok "the committed installers (plain, pg_tle) equal a fresh generation"; else
  bad "a committed installer differs from a fresh generation"; fi

# 2. install as an owner who is not a superuser
q postgres postgres "CREATE ROLE $OWNER LOGIN NOSUPERUSER NOCREATEROLE" "CREATE ROLE $OTHER LOGIN" \
  "CREATE DATABASE $DB OWNER $OWNER" "CREATE DATABASE $CDB" >/dev/null
check "the installing owner is not a superuser" f "$(q postgres postgres "SELECT rolsuper FROM pg_roles WHERE rolname = '$OWNER'")"
check "no library of ours is preloaded" "" "$(q postgres postgres 'SHOW shared_preload_libraries')"
# (its WARNING says what refuses without the preload: the decoders work)
q postgres "$CDB" 'CREATE EXTENSION snowflake' >/dev/null 2>&1
# Refused, with nothing left behind, into a schema where another role may create objects
# (which could then run code as the owner through the SECURITY DEFINER functions)
q postgres postgres "CREATE DATABASE ${DB}_open OWNER $OWNER" >/dev/null
q postgres "${DB}_open" "GRANT CREATE ON SCHEMA public TO PUBLIC" >/dev/null
open_out=$("${PSQL[@]}" -U "$OWNER" -d "${DB}_open" -v VERBOSITY=verbose -f "$ROOT/trusted/snowflake_trusted.sql" 2>&1 >/dev/null || true)
check "the install into a schema others may create in: 42501, naming them" "42501|1" \
  "$(grep -c 'ERROR:  42501: other roles may create objects in schema public' <<<"$open_out" | sed 's/^[1-9][0-9]*$/42501/')|$(grep -c "Roles that may: PUBLIC (every role)" <<<"$open_out")"
check "the refused install left nothing" 0 "$(q "$OWNER" "${DB}_open" "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")"
# An operator of another role's, there before CREATE was taken back: of the exact types of a
# call in the edition's bodies (bigint & integer), it would be bound in place of pg_catalog's
# (which needs a cast) and run as the owner. Refused in its schema; not bound from another
# schema of the installing session's search_path (the installer searches its own schema alone).
# With it, an = (oid, regnamespace) that answers false: bound in the install's own checks, it
# would hide both from them.
q "$OTHER" "${DB}_open" "CREATE FUNCTION public.tr_and(bigint, integer) RETURNS bigint LANGUAGE sql IMMUTABLE RETURN 0" \
  "CREATE OPERATOR public.& (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = public.tr_and)" \
  "CREATE FUNCTION public.tr_eq(oid, regnamespace) RETURNS boolean LANGUAGE sql IMMUTABLE RETURN false" \
  "CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regnamespace, FUNCTION = public.tr_eq)" >/dev/null
q "$OWNER" "${DB}_open" "REVOKE CREATE ON SCHEMA public FROM PUBLIC" "CREATE SCHEMA ids" >/dev/null
open_out=$("${PSQL[@]}" -U "$OWNER" -d "${DB}_open" -v VERBOSITY=verbose -f "$ROOT/trusted/snowflake_trusted.sql" 2>&1 >/dev/null || true)
check "the install into a schema that holds another role's operators: 42501, naming them" "1|1|1" \
  "$(grep -c 'ERROR:  42501: schema public holds functions or operators of other roles' <<<"$open_out")|$(grep -c "operator &(bigint,integer) (owner $OTHER)" <<<"$open_out")|$(grep -c "operator =(oid,regnamespace) (owner $OTHER)" <<<"$open_out")"
if "${PSQL[@]}" -U "$OWNER" -d "${DB}_open" -c "SET search_path = ids, public" -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null 2>&1 &&
  q "$OWNER" "${DB}_open" "SELECT ids.snowflake_configure(shard_id => 5)" >/dev/null; then
  ok "the install into schema ids, with search_path ids, public, then snowflake_configure"
else bad "the install into schema ids, with search_path ids, public, failed"; fi
check "no function of the edition uses a function or operator of another role's (of the functions' recorded uses)" "0|t" "$(q "$OWNER" "${DB}_open" "
  SELECT count(*) FILTER (WHERE d.refclassid = 'pg_operator'::regclass AND d.refobjid IN (SELECT oid FROM pg_operator WHERE oprowner = '$OTHER'::regrole)
      OR d.refclassid = 'pg_proc'::regclass AND d.refobjid IN (SELECT oid FROM pg_proc WHERE proowner = '$OTHER'::regrole)),
    count(*) FILTER (WHERE d.refclassid = 'pg_proc'::regclass) > 0
  FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  WHERE p.pronamespace = 'ids'::regnamespace::oid")"
# A schema whose name needs quotes ("Ids", beside ids): checked and pinned by its own name,
# not by ids (the text of "Ids" read as an identifier)
q "$OWNER" "${DB}_open" 'CREATE SCHEMA "Ids"' "GRANT CREATE ON SCHEMA \"Ids\" TO $OTHER" >/dev/null
open_out=$("${PSQL[@]}" -U "$OWNER" -d "${DB}_open" -v VERBOSITY=verbose -c 'SET search_path = "Ids"' -f "$ROOT/trusted/snowflake_trusted.sql" 2>&1 >/dev/null || true)
check "the install into schema \"Ids\" where another role may create: 42501, naming it" 1 \
  "$(grep -c "ERROR:  42501: other roles may create objects in schema \"Ids\"" <<<"$open_out")"
q "$OWNER" "${DB}_open" "REVOKE CREATE ON SCHEMA \"Ids\" FROM $OTHER" >/dev/null
"${PSQL[@]}" -U "$OWNER" -d "${DB}_open" -c 'SET search_path = "Ids"' -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null
check "the install into schema \"Ids\": every SECURITY DEFINER function pins search_path = pg_catalog, \"Ids\", pg_temp" "t|0" \
  "$(q "$OWNER" "${DB}_open" "SELECT count(*) > 10, count(*) FILTER (WHERE NOT proconfig @> ARRAY['search_path=pg_catalog, \"Ids\", pg_temp'])
    FROM pg_proc WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'Ids') AND prosecdef")"
# Objects another role puts in the schema after the install (CREATE granted for a while, or
# its transaction open across the REVOKE): functions that run as the owner when any role calls
# them (the catch-up, the masks) and that resolve names as they run call pg_catalog's by name
# or with operands of the exact types, so that none of these takes their place. Each raises.
q "$OWNER" "${DB}_open" "CREATE EXTENSION pgcrypto" "SELECT ids.snowflake_mask_use_pgcrypto()" \
  "SELECT ids.snowflake_mask_key_add(1, '$(openssl rand -hex 32)', true)" "GRANT USAGE, CREATE ON SCHEMA ids TO $OTHER" >/dev/null
q "$OTHER" "${DB}_open" "CREATE FUNCTION ids.tr_mul(double precision, integer) RETURNS double precision LANGUAGE plpgsql AS \$\$BEGIN RAISE EXCEPTION 'hijacked by *'; END\$\$" \
  "CREATE OPERATOR ids.* (LEFTARG = double precision, RIGHTARG = integer, FUNCTION = ids.tr_mul)" \
  "CREATE FUNCTION ids.tr_agg(bytea[], bytea) RETURNS bytea[] LANGUAGE plpgsql AS \$\$BEGIN RAISE EXCEPTION 'hijacked by array_agg'; END\$\$" \
  "CREATE AGGREGATE ids.array_agg(bytea) (SFUNC = ids.tr_agg, STYPE = bytea[])" \
  "CREATE FUNCTION ids.format(text, text, text) RETURNS text LANGUAGE plpgsql AS \$\$BEGIN RAISE EXCEPTION 'hijacked by format'; END\$\$" >/dev/null
q "$OWNER" "${DB}_open" "REVOKE CREATE ON SCHEMA ids FROM $OTHER" >/dev/null
check "another role's *(double precision, integer), array_agg(bytea) and format(text, text, text) in the schema: the catch-up and the masks run pg_catalog's" \
  "t|t|t|t" "$(q "$OTHER" "${DB}_open" "BEGIN" "SELECT ids.snowflake() > 0, pg_stat_get_xact_function_calls('ids.snowflake_catch_up'::regproc) > 0,
    ids.snowflake_unmask(ids.snowflake_mask(42)) = 42, ids.sno_unmask(ids.sno_mask('\\x0123456789abcdef0123'::bytea)) = '\\x0123456789abcdef0123'::bytea" "COMMIT")"
check "another role's format(text, text, text) in the schema: a token's prefix refused with the edition's 22P02" \
  "22P02	snowflake token has the prefix \"ab\", and none was given	" \
  "$(errors_of "$OTHER" "${DB}_open" "SELECT ids.snowflake_unmask('ab_' || ids.snowflake_mask(42))")"
q "$OTHER" "${DB}_open" "DROP FUNCTION ids.format(text, text, text)" "DROP AGGREGATE ids.array_agg(bytea)" "DROP OPERATOR ids.* (double precision, integer)" >/dev/null
# CREATE granted to a role that cannot log in, which a login role reaches by SET ROLE
q postgres postgres "CREATE ROLE tr_group NOLOGIN" "GRANT tr_group TO $OTHER" "ALTER ROLE $OTHER NOINHERIT" \
  "CREATE DATABASE ${DB}_group OWNER $OWNER" >/dev/null
q "$OWNER" "${DB}_group" "GRANT CREATE ON SCHEMA public TO tr_group" >/dev/null
group_out=$("${PSQL[@]}" -U "$OWNER" -d "${DB}_group" -v VERBOSITY=verbose -f "$ROOT/trusted/snowflake_trusted.sql" 2>&1 >/dev/null || true)
check "the install where a role without login (reached by SET ROLE) may create: 42501, naming who reaches it" "1|1" \
  "$(grep -c 'ERROR:  42501: other roles may create objects in schema public' <<<"$group_out")|$(grep -c "Roles that may: $OTHER\." <<<"$group_out")"
q postgres postgres "ALTER ROLE $OTHER INHERIT" >/dev/null
# Default privileges of the owner that grant to another role (as Supabase's for anon): taken
# back from what only the owner may use; the generators stay callable
q postgres postgres "CREATE DATABASE ${DB}_defacl OWNER $OWNER" >/dev/null
q "$OWNER" "${DB}_defacl" "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO $OTHER" \
  "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO $OTHER" \
  "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON FUNCTIONS TO $OTHER" >/dev/null
"${PSQL[@]}" -U "$OWNER" -d "${DB}_defacl" -q -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null
for e in "SELECT * FROM snowflake_mask_keys" "SELECT setval('snowflake_counter', 1)" "UPDATE snowflake_config SET max_lag_ms = 5" \
  "SELECT snowflake_configure(shard_id => 1)" "SELECT snowflake(3)" "SELECT snowflake_mask_key_fingerprint()"; do
  check "default privileges to another role, then the install: $e is still refused (42501)" 42501 "$(sqlstate "$OTHER" "${DB}_defacl" "$e")"
done
check "default privileges to another role: it still generates and reads the configuration" "t|t" \
  "$(q "$OTHER" "${DB}_defacl" "SELECT snowflake_uuidv7() IS NOT NULL, (SELECT count(*) = 1 FROM snowflake_config)")"
# The clock past the layout's range (2^40 ms after an epoch of 1970: 2004-11-03): the C
# extension's 22008 and message, from the catch-up (not setval's 22003)
q "$OWNER" "${DB}_defacl" "SELECT snowflake_configure(shard_id => 1, epoch => '1970-01-01 00:00:00+00')" >/dev/null
check "snowflake() with the clock past its range: 22008, the C extension's message" \
  "22008	snowflake values are exhausted: the clock is past the range of the layout	" \
  "$(errors_of "$OTHER" "${DB}_defacl" "SELECT snowflake()")"
"${PSQL[@]}" -U "$OWNER" -d "$DB" -q -f "$ROOT/trusted/snowflake_trusted.sql" >/dev/null
# check_objects DB: what the install put in public is SQL and PL/pgSQL alone, and commented
check_objects() {
  check "nothing installed is LANGUAGE c" 0 "$(q "$OWNER" "$1" "SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE l.lanname = 'c' AND p.pronamespace = 'public'::regnamespace")"
  check "every object of the edition has a comment" 0 "$(q "$OWNER" "$1" "
    SELECT count(*) FROM (
      SELECT p.oid, 'pg_proc'::regclass AS cls FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
      UNION ALL SELECT c.oid, 'pg_class' FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
    ) o WHERE obj_description(o.oid, o.cls::name) IS NULL")"
}
check_objects "$DB"
check "snowflake() before snowflake_configure: 55000" 55000 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake()')"
check "snowflake_configure by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_configure(shard_id => 6)')"
check "snowflake_configure(shard_id => 8192): 22023, as C's snowflake(8192)" \
  "$(sqlstate postgres "$CDB" 'SELECT snowflake(8192)')" "$(sqlstate "$OWNER" "$DB" 'SELECT snowflake_configure(shard_id => 8192)')"
for bad_conf in "max_lag_ms => 0" "max_lag_ms => 1001" "epoch => '2020-01-01 00:00:00.0005+00'" \
  "epoch => 'infinity'" "epoch => '1969-12-31 23:59:59+00'" "epoch => now() + interval '1 day'"; do
  check "snowflake_configure($bad_conf): 22023" 22023 "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_configure($bad_conf)")"
done
check "the epoch with the first shard, in one call" "5|1577836800000" \
  "$(q "$OWNER" "$DB" "SELECT shard_id, epoch_ms FROM snowflake_configure(shard_id => 5, epoch => '2020-01-01 00:00:00+00')")"
for change in "UPDATE snowflake_config SET shard_id = 7" "DELETE FROM snowflake_config" "TRUNCATE snowflake_config"; do
  check "$change by the owner, not through snowflake_configure: 55000" 55000 "$(sqlstate "$OWNER" "$DB" "$change")"
done
check "setval on the counter by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" "SELECT setval('snowflake_counter', 1)")"
check "setval on the 128-bit counter by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" "SELECT setval('snowflake_counter128', 1)")"
check "the generator writer by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_trusted_write_generators()')"
check "the catch-up of an unknown kind: 22023" 22023 "$(sqlstate "$OTHER" "$DB" "SELECT snowflake_catch_up('x')")"
q "$OWNER" "$DB" "GRANT CREATE ON SCHEMA public TO $OTHER" >/dev/null
check "CREATE on the schema granted after the install: snowflake_configure refuses (42501)" 42501 \
  "$(sqlstate "$OWNER" "$DB" 'SELECT snowflake_configure(max_lag_ms => 100)')"
q "$OWNER" "$DB" "REVOKE CREATE ON SCHEMA public FROM $OTHER" >/dev/null
check "the epoch cannot change once a shard is set, even before an ID: 55000" 55000 \
  "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_configure(epoch => '2021-01-01 00:00:00+00')")"
check "the same epoch again is no change" 5 \
  "$(q "$OWNER" "$DB" "SELECT (snowflake_configure(epoch => '2020-01-01 00:00:00+00')).shard_id")"
check "another role generates on shard 5" 5 "$(q "$OTHER" "$DB" 'SELECT snowflake_shard(snowflake())')"
check "every function, schema-qualified, from search_path = pg_catalog" "5|t|t|t|t|t|5|t" "$(q "$OTHER" "$DB" \
  "SET search_path = pg_catalog" "SELECT public.snowflake_shard(public.snowflake()), public.snowflake_at(now()) > 0,
    public.uuidv7_timestamp(public.snowflake_uuidv7()) IS NOT NULL, public.ulid_timestamp(public.ulid()) IS NOT NULL,
    public.text_to_ulid(public.ulid_to_text(public.ulid_at(now()))) = public.ulid_at(now()), public.uuidv7_at(now()) IS NOT NULL,
    (public.snowflake_decode(public.snowflake())).shard, public.snowflake_timestamp(public.snowflake(), timestamptz '2020-01-01 00:00:00+00') IS NOT NULL")"
check "the epoch cannot change once snowflake() issued: 55000" 55000 \
  "$(sqlstate "$OWNER" "$DB" "SELECT snowflake_configure(epoch => '2021-01-01 00:00:00+00')")"
check "snowflake(shard) by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake(3)')"
before=$(q "$OWNER" "$DB" "SELECT snowflake()")
after=$(q "$OWNER" "$DB" "SELECT snowflake(3)")
check "snowflake(shard) by the owner: that shard, its tick above snowflake()'s before it, NULL for NULL" "3|t|t" \
  "$(q "$OWNER" "$DB" "SELECT snowflake_shard($after), ($after & ~(8191::bigint << 10)) > ($before & ~(8191::bigint << 10)), snowflake(NULL) IS NULL")"
for sh in 8192 -1; do
  check "snowflake($sh): the C extension's SQLSTATE" "$(sqlstate postgres "$CDB" "SELECT snowflake($sh)")" "$(sqlstate "$OWNER" "$DB" "SELECT snowflake($sh)")"
done
check "snowflake(shard) is inlined" 1 \
  "$(q "$OWNER" "$DB" 'EXPLAIN (VERBOSE, COSTS OFF) SELECT snowflake(3)' | grep -c 'nextval(.snowflake_counter.::regclass)')"
check "snowflake() is inlined: no function call of ours on the fast path" 1 \
  "$(q "$OWNER" "$DB" 'EXPLAIN (VERBOSE, COSTS OFF) SELECT snowflake()' | grep -c 'nextval(.snowflake_counter.::regclass)')"

# 3. 100,000 IDs of each kind in one call, read by the C extension
N=100000
# check_ids DB CDB OUT: $N IDs of each kind by $OTHER in DB (shard 5 configured), judged by
# the C extension in CDB of the same server; files in OUT
check_ids() {
  local db=$1 cdb=$2 out=$3 kind gen mine t0 t1 ctype cts cshard cseq ctext per_ms res
  for kind in snowflake uuidv7 ulid; do
    case $kind in
      snowflake) gen='snowflake()'; mine='snowflake_timestamp(id), snowflake_shard(id), snowflake_seq(id), NULL::text' ;;
      uuidv7) gen='snowflake_uuidv7()'; mine='uuidv7_timestamp(id), NULL::int, NULL::int, NULL::text' ;;
      ulid) gen='ulid()'; mine='ulid_timestamp(id), NULL::int, NULL::int, ulid_to_text(id)' ;;
    esac
    # t0, then the IDs in issue order, then t1
    "${PSQL[@]}" -U "$OTHER" -d "$db" -At -c "SELECT 't0', clock_timestamp()" \
      -c "CREATE TEMP TABLE ids AS SELECT i, $gen AS id FROM generate_series(1, $N) i" \
      -c "SELECT 't1', clock_timestamp()" \
      -c "\\copy (SELECT i, id, $mine FROM ids ORDER BY i) TO '$out/$kind.csv' CSV" >"$out/$kind.times"
    t0=$(sed -n 's/^t0|//p' "$out/$kind.times")
    t1=$(sed -n 's/^t1|//p' "$out/$kind.times")
    case $kind in
      snowflake) ctype=bigint; cts='(snowflake_decode(id)).ts'; cshard='(snowflake_decode(id)).shard'; cseq='(snowflake_decode(id)).seq'; ctext='NULL::text' ;;
      uuidv7) ctype=uuid; cts='uuidv7_timestamp(id)'; cshard='NULL::int'; cseq='NULL::int'; ctext='NULL::text' ;;
      ulid) ctype=uuid; cts='ulid_timestamp(id::ulid)'; cshard='NULL::int'; cseq='NULL::int'; ctext='id::ulid::text' ;;
    esac
    # lead: a burst above 1,024 (4,096) a millisecond runs ahead of the clock by at most N/rate ms
    per_ms=$([ $kind = snowflake ] && echo 1024 || echo 4096)
    res=$("${PSQL[@]}" -U postgres -d "$cdb" -At \
      -c "CREATE TEMP TABLE g (i int, id $ctype, my_ts timestamptz, my_shard int, my_seq int, my_text text)" \
      -c "\\copy g FROM '$out/$kind.csv' CSV" \
      -c "SELECT count(*), count(DISTINCT id),
            count(*) FILTER (WHERE c_ts IS DISTINCT FROM my_ts OR c_shard IS DISTINCT FROM my_shard
                             OR c_seq IS DISTINCT FROM my_seq OR c_text IS DISTINCT FROM my_text),
            count(*) FILTER (WHERE c_shard IS NOT NULL AND c_shard <> 5),
            count(*) FILTER (WHERE c_ts IS NULL OR c_ts < timestamptz '$t0' - interval '101 ms'
                             OR c_ts > timestamptz '$t1' + ($N / $per_ms + 2) * interval '1 ms'),
            count(*) FILTER (WHERE id <= prev)
          FROM (SELECT *, $cts AS c_ts, $cshard AS c_shard, $cseq AS c_seq, $ctext AS c_text,
                       lag(id) OVER (ORDER BY i) AS prev FROM g) d")
    check "$kind: $N IDs, all distinct, the C extension decodes each as the trusted decoders do, on shard 5 (if any), within the call, increasing" \
      "$N|$N|0|0|0|0" "$res"
  done
}
check_ids "$DB" "$CDB" "$DIR/out"

# decoders, bounds and ULID text at edge values: trusted (in DB) = C (in CDB)
check_edges() {
  local db=$1 cdb=$2 edges_ok expr mine theirs u
  edges_ok=0
  for expr in "snowflake_timestamp(0)" "snowflake_timestamp(9223372036854775807)" "snowflake_decode(9223372036854775807)" \
    "snowflake_shard(8388607)" "snowflake_seq(1023)" "snowflake_at('2020-01-01 00:00:00+00')" \
    "snowflake_at('2054-11-03 19:53:47.775+00')" "snowflake_at('2026-05-05 12:34:56.789999+02')" \
    "snowflake_timestamp(123456789012345, '2010-11-04 01:42:54.657+00')" "snowflake_at('2026-01-01', timestamptz '2015-01-01 00:00:00+00')" \
    "uuidv7_at('1970-01-01 00:00:00+00')" "uuidv7_at('10889-08-02 05:31:50.655+00')" "uuidv7_at('2026-02-03 04:05:06.0071+00')" \
    "uuidv7_timestamp('018cc251-f400-7000-8000-000000000000')" "uuidv7_timestamp('018cc251-f400-4000-8000-000000000000')" \
    "uuidv7_timestamp('018cc251-f400-7000-c000-000000000000')" "uuidv7_timestamp('ffffffff-ffff-7fff-bfff-ffffffffffff')"; do
    mine=$(q "$OTHER" "$db" "SELECT $expr" 2>&1) || true
    theirs=$(q postgres "$cdb" "SELECT $expr" 2>&1) || true
    [ "$mine" = "$theirs" ] || { bad "$expr: trusted \"$mine\", C \"$theirs\""; edges_ok=1; }
  done
  for u in 00000000-0000-0000-0000-000000000000 ffffffff-ffff-ffff-ffff-ffffffffffff 01234567-89ab-cdef-0123-456789abcdef \
    7fffffff-ffff-ffff-ffff-ffffffffffff 018cc251-f400-7000-8000-000000000000; do
    mine=$(q "$OTHER" "$db" 2>&1 "SELECT ulid_to_text('$u'), ulid_timestamp('$u'), ulid_at(ulid_timestamp('$u')), text_to_ulid(lower(ulid_to_text('$u')))") || true
    theirs=$(q postgres "$cdb" 2>&1 "SELECT '$u'::uuid::ulid::text, ulid_timestamp('$u'::uuid::ulid), ulid_at(ulid_timestamp('$u'::uuid::ulid))::uuid, lower('$u'::uuid::ulid::text)::ulid::uuid") || true
    [ "$mine" = "$theirs" ] || { bad "ulid $u: trusted \"$mine\", C \"$theirs\""; edges_ok=1; }
  done
  [ $edges_ok = 1 ] || ok "decoders, bounds and ULID text at edge values equal the C extension's"
}
check_edges "$DB" "$CDB"

# 4. concurrency: 8 sessions in bursts, then 8 of single statements racing catch-ups
S=8
pids=()
for s in $(seq 1 $S); do
  "${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "\\copy (SELECT $s, i, snowflake() FROM generate_series(1, $N) i) TO '$DIR/out/burst.$s' CSV" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || bad "a burst session failed"; done
q "$OWNER" "$DB" 'SELECT snowflake_configure(max_lag_ms => 1)' >/dev/null
M=5000
pids=()
for s in $(seq 1 $S); do
  # one statement each: the sessions together run below 1,024 IDs a millisecond, so the
  # counter trails the clock and catch-ups run all the time, among the others' nextval()
  (for i in $(seq 1 $M); do echo "SELECT $s, $i, snowflake();"; done) |
    "${PSQL[@]}" -U "$OTHER" -d "$DB" -At -F, -f - >"$DIR/out/single.$s" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || bad "a single-statement session failed"; done
q "$OWNER" "$DB" 'SELECT snowflake_configure(max_lag_ms => 100)' >/dev/null
cat "$DIR"/out/burst.* >"$DIR/out/burst.csv"
cat "$DIR"/out/single.* >"$DIR/out/single.csv"
for run in burst single; do
  want=$([ $run = burst ] && echo $((S * N)) || echo $((S * M)))
  res=$("${PSQL[@]}" -U postgres -d "$CDB" -At \
    -c "CREATE TEMP TABLE c (s int, i int, id bigint)" \
    -c "\\copy c FROM '$DIR/out/$run.csv' CSV" \
    -c "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id <= prev), count(*) FILTER (WHERE snowflake_shard(id) <> 5)
        FROM (SELECT *, lag(id) OVER (PARTITION BY s ORDER BY i) AS prev FROM c) d")
  check "$S sessions, $run: $want IDs, no duplicate, each session's increasing, shard 5" "$want|$want|0|0" "$res"
done
catchups=$(q "$OWNER" "$DB" "SELECT calls FROM pg_stat_user_functions WHERE funcname = 'snowflake_catch_up'" || true)
echo "(catch-ups counted: ${catchups:-not tracked})"

# 5. a crash, then the clock 10 minutes behind
q "$OWNER" "$DB" "CREATE TABLE old_max (kind text PRIMARY KEY, id text)" "GRANT ALL ON old_max TO $OTHER" >/dev/null
q "$OTHER" "$DB" "INSERT INTO old_max VALUES ('snowflake', (SELECT max(x)::text FROM (SELECT snowflake() x FROM generate_series(1, 1000)) s)),
  ('uuidv7', (SELECT x::text FROM (SELECT snowflake_uuidv7() x FROM generate_series(1, 1000)) s ORDER BY x DESC LIMIT 1)),
  ('ulid', (SELECT x::text FROM (SELECT ulid() x FROM generate_series(1, 1000)) s ORDER BY x DESC LIMIT 1))" >/dev/null
old_sf=$(q "$OTHER" "$DB" "SELECT id FROM old_max WHERE kind = 'snowflake'")
all_max=$(cut -d, -f3 "$DIR/out/burst.csv" "$DIR/out/single.csv" | sort -n | tail -n 1)
[ "$all_max" -lt "$old_sf" ] || bad "the last snowflake() before the crash is not the largest"
# IDs handed out in a transaction still open at the crash (their WAL need not be on disk yet)
"${PSQL[@]}" -U "$OTHER" -d "$DB" -At -c "BEGIN" -c "SELECT max(snowflake()) FROM generate_series(1, 50)" \
  -c "SELECT pg_sleep(600)" >"$DIR/out/open" 2>/dev/null &
open_pid=$!
for _ in $(seq 1 600); do [ -s "$DIR/out/open" ] && break; sleep 0.05; done
open_id=$(head -n 1 "$DIR/out/open")
[ -n "$open_id" ] || bad "no ID from the open transaction"
as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m immediate stop >/dev/null
wait "$open_pid" 2>/dev/null || true
FAKETIME_LIB=$(faketime_library)
as_user env LD_PRELOAD="$FAKETIME_LIB" FAKETIME=-10m DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
  "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -l "$DIR/server.log" -w start >/dev/null
behind=$(q "$OTHER" "$DB" "SELECT round(extract(epoch FROM now()) - $(date +%s))")
if [ "$behind" -gt -650 ] && [ "$behind" -lt -550 ]; then ok "after the crash the server's clock is 10 minutes behind ($behind s)"; else
  bad "the server's clock is not 10 minutes behind: $behind s"; fi
# Not promised (docs/managed.md): IDs of a transaction open at the crash, whose sequence WAL
# no commit had flushed yet, may be issued again. Reported, not asserted.
again=$(q "$OTHER" "$DB" "SELECT count(*) FROM (SELECT snowflake() x FROM generate_series(1, 100)) s WHERE x <= ${open_id:-0}")
echo "(known limit: of 100 new IDs, $again are at or below the last ID of the transaction open at the crash)"
# No wait, asserted without timing anything: nothing in the fast path can wait, and the slow
# path (snowflake_catch_up, the only PL/pgSQL a generator calls) does not run while the
# counters are ahead of the clock; its calls are counted in the same transaction
# (track_functions = 'pl'), where no flush of statistics can lag.
res=$(q "$OTHER" "$DB" "BEGIN" "SELECT
  (SELECT min(x) FROM (SELECT snowflake() x FROM generate_series(1, 1000)) s) > (SELECT id::bigint FROM old_max WHERE kind = 'snowflake'),
  (SELECT x FROM (SELECT snowflake_uuidv7() x FROM generate_series(1, 1000)) s ORDER BY x LIMIT 1) > (SELECT id::uuid FROM old_max WHERE kind = 'uuidv7'),
  (SELECT x FROM (SELECT ulid() x FROM generate_series(1, 1000)) s ORDER BY x LIMIT 1) > (SELECT id::uuid FROM old_max WHERE kind = 'ulid'),
  coalesce(pg_stat_get_xact_function_calls('snowflake_catch_up'::regproc), 0)" "COMMIT")
check "after the crash, with the clock behind: every new ID above every old one (snowflake, UUIDv7, ULID), no catch-up (no wait)" "t|t|t|0" "$res"

# 6. bad input: the same SQLSTATE as the C extension's. same_state TRUSTED_SQL C_SQL queues a
# pair; judge_states runs each side's queue in one session, each statement in a subtransaction
# of its own (errors_of, above), and reports each pair: an error, the C extension's
# SQLSTATE. With "messages", a bad text's (22P02) message and DETAIL are compared too, and the
# pairs whose differ are counted in states_messages_differ (of states_messages_compared). Only
# queries are queued: each runs with its rows turned into text (so that a type's output
# function runs too) and is then rolled back, so that none changes what the next one sees.
states_mine=()
states_theirs=()
states_messages_differ=0
states_messages_compared=0
same_state() {
  case "$1 $2" in
    "SELECT "*" SELECT "*) ;;
    *) die "same_state queues queries only (SELECT …): $1 / $2" ;;
  esac
  states_mine+=("$1")
  states_theirs+=("$2")
}
# A batch that does not give a line a query (a crashed backend, say) is run again a query at a
# time, so that the failure names its query.
judge_states() {  # judge_states DB [messages]
  local mine=() theirs=() i m t
  [ ${#states_mine[@]} -gt 0 ] || return 0
  mapfile -t mine < <(errors_of "$OTHER" "$1" "${states_mine[@]}" || true)
  mapfile -t theirs < <(errors_of postgres "$CDB" "${states_theirs[@]}" || true)
  if [ ${#mine[@]} != ${#states_mine[@]} ] || [ ${#theirs[@]} != ${#states_theirs[@]} ]; then
    echo "(a batch of ${#states_mine[@]} bad inputs gave ${#mine[@]} trusted and ${#theirs[@]} C results: one at a time)"
    for i in "${!states_mine[@]}"; do
      mine[$i]=$(errors_of "$OTHER" "$1" "${states_mine[$i]}" 2>&1 | tr '\n' ' ') || true
      theirs[$i]=$(errors_of postgres "$CDB" "${states_theirs[$i]}" 2>&1 | tr '\n' ' ') || true
    done
  fi
  for i in "${!states_mine[@]}"; do
    m=${mine[$i]%%$'\t'*}
    t=${theirs[$i]%%$'\t'*}
    if [ "$m" = "$t" ] && [[ $m =~ ^[0-9A-Z]{5}$ ]]; then ok "${states_mine[$i]}: $m, as C"; else
      bad "${states_mine[$i]}: trusted \"${mine[$i]}\", C \"${theirs[$i]}\" (${states_theirs[$i]})"; fi
    if [ "${2:-}" = messages ] && [ "$t" = 22P02 ]; then
      states_messages_compared=$((states_messages_compared + 1))
      if [ "${mine[$i]}" != "${theirs[$i]}" ]; then
        states_messages_differ=$((states_messages_differ + 1))
        echo "(message of ${states_mine[$i]}: trusted \"${mine[$i]}\", C \"${theirs[$i]}\")"
      fi
    fi
  done
  states_mine=()
  states_theirs=()
}
for e in "snowflake_timestamp(-1)" "snowflake_decode(-1)" "snowflake_shard(-1)" "snowflake_seq(-1)" \
  "snowflake_at('infinity')" "snowflake_at('-infinity')" "snowflake_at('2019-12-31 23:59:59.999+00')" \
  "snowflake_at('2054-11-03 19:53:47.776+00')" "snowflake_timestamp(1, '2020-01-01 00:00:00.0005+00')" \
  "snowflake_timestamp(1, 'infinity')" "snowflake_timestamp(1, '1969-12-31 23:59:59+00')" \
  "snowflake_timestamp(-5, '2020-01-01 00:00:00+00')" "snowflake_at(now(), timestamptz '2100-01-01 00:00:00.001+00')" \
  "snowflake_at('2010-01-01', timestamptz '2015-01-01 00:00:00+00')" \
  "uuidv7_at('infinity')" "uuidv7_at('1969-12-31 23:59:59.999+00')" "uuidv7_at('10889-08-02 05:31:50.656+00')" \
  "ulid_at('-infinity')" "ulid_at('1969-12-31 23:59:59.999+00')" "ulid_at('10889-08-02 05:31:50.656+00')"; do
  same_state "SELECT $e" "SELECT $e"
done
for t in '' 01ARZ3NDEKTSV4RRFFQ69G5FA 01ARZ3NDEKTSV4RRFFQ69G5FAVX 01ARZ3NDEKTSV4RRFFQ69G5FAU 01ARZ3NDEKTSV4RRFFQ69G5FAI \
  01ARZ3NDEKTSV4RRFFQ69G5FA- 81ARZ3NDEKTSV4RRFFQ69G5FAV 'é1ARZ3NDEKTSV4RRFFQ69G5FA'; do
  same_state "SELECT text_to_ulid('$t')" "SELECT '$t'::ulid"
done
judge_states "$DB"

# 7. the other kinds' decoders, bounds and text, and TypeID (test/trusted/kinds.sh); 8. the
# masks (test/trusted/mask.sh): on this server, judged by the C extension in $CDB
source "$(dirname "$0")/kinds.sh"
source "$(dirname "$0")/mask.sh"

# 8b. a standby streaming from this server, its clock 10 minutes behind the server's (which is
# 10 minutes behind since 5): the generators refuse there with nextval's 25006 and its message,
# the configuration is not changed, and what reads works (decoders, the shifted UUIDv7, masks).
# Then its promotion, once it replayed what was committed: every new ID above every old one,
# and no catch-up (no wait).
STANDBY=$DIR/standby
STANDBY_PORT=$((SERVER_PORT + 1))
as_user rm -rf "$STANDBY"
as_user "$PG_BIN/pg_basebackup" -h "$SERVER_SOCK" -p "$SERVER_PORT" -U postgres -D "$STANDBY" -R -X stream -c fast
echo "port = $STANDBY_PORT" | as_user tee -a "$STANDBY/postgresql.auto.conf" >/dev/null
trap 'as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m immediate stop >/dev/null 2>&1 || true
  as_user "$PG_BIN/pg_ctl" -D "$STANDBY" -m immediate stop >/dev/null 2>&1 || true' EXIT
as_user env LD_PRELOAD="$FAKETIME_LIB" FAKETIME=-20m DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
  "$PG_BIN/pg_ctl" -D "$STANDBY" -l "$DIR/standby.log" -w start >/dev/null
on_standby() {  # on_standby ROLE SQL: the SQLSTATE and message of its error, or its rows
  "${PSQL[@]}" -p "$STANDBY_PORT" -U "$1" -d "$DB" -At -v VERBOSITY=verbose -c "$2" 2>&1 | sed -n 's/^ERROR:  //p; /^[a-z0-9]/p' | head -n 1
}
check "the standby is in recovery" t "$(on_standby "$OTHER" 'SELECT pg_is_in_recovery()')"
for g in "snowflake()" "snowflake_uuidv7()" "ulid()"; do
  check "$g on a standby: 25006, nextval's message" "25006: cannot execute nextval() in a read-only transaction" \
    "$(on_standby "$OTHER" "SELECT $g" | sed 's/^\(25006: cannot execute nextval() in a read-only transaction\).*/\1/')"
done
check "snowflake_configure on a standby: 25006" 25006 "$(on_standby "$OWNER" 'SELECT snowflake_configure(max_lag_ms => 50)' | cut -c1-5)"
check "on a standby: the decoders, the shifted UUIDv7 and the masks work" "5|true|true" \
  "$(on_standby "$OTHER" "SELECT snowflake_shard($old_sf) || '|' || (uuidv7_timestamp(snowflake_uuidv7(interval '0')) IS NOT NULL) || '|' || (snowflake_unmask(snowflake_mask(42)) = 42)")"
q "$OWNER" "$DB" "CREATE TABLE before_failover AS SELECT snowflake() AS sf, snowflake_uuidv7() AS u7, ulid() AS ul FROM generate_series(1, 1000)" \
  "GRANT SELECT ON before_failover TO $OTHER" >/dev/null
lsn=$(q postgres "$DB" 'SELECT pg_current_wal_flush_lsn()')
for _ in $(seq 1 1800); do
  [ "$(on_standby postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
  sleep 0.1
done
check "the standby replayed the primary's last commit" t "$(on_standby postgres "SELECT pg_last_wal_replay_lsn() >= '$lsn'")"
as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m immediate stop >/dev/null
as_user "$PG_BIN/pg_ctl" -D "$STANDBY" -w promote >/dev/null
check "after the promotion, its clock 20 minutes behind: every new ID above every old one (snowflake, UUIDv7, ULID), no catch-up" \
  "t|t|t|t|0" "$("${PSQL[@]}" -p "$STANDBY_PORT" -U "$OTHER" -d "$DB" -At -c "BEGIN" -c "SELECT
  extract(epoch FROM now()) - $(date +%s) BETWEEN -1250 AND -1150,
  (SELECT min(x) FROM (SELECT snowflake() x FROM generate_series(1, 1000)) s) > (SELECT max(sf) FROM before_failover),
  (SELECT x FROM (SELECT snowflake_uuidv7() x FROM generate_series(1, 1000)) s ORDER BY x LIMIT 1) > (SELECT u7 FROM before_failover ORDER BY u7 DESC LIMIT 1),
  (SELECT x FROM (SELECT ulid() x FROM generate_series(1, 1000)) s ORDER BY x LIMIT 1) > (SELECT ul FROM before_failover ORDER BY ul DESC LIMIT 1),
  coalesce(pg_stat_get_xact_function_calls('snowflake_catch_up'::regproc), 0)" -c "COMMIT")"
as_user "$PG_BIN/pg_ctl" -D "$STANDBY" -m fast stop >/dev/null
trap - EXIT

# 9 to 12. the pg_tle installer, on a server of its own, where pg_tle is installed
source "$(dirname "$0")/pg_tle.sh"
[ ${#states_mine[@]} = 0 ] || bad "${#states_mine[@]} bad inputs were queued and never judged"

if [ $failed != 0 ]; then
  echo "trusted edition: FAILED (logs and files in $DIR)"
  exit 1
fi
echo "trusted edition: all passed"
