# shellcheck shell=bash
# The trusted edition as a pg_tle extension (trusted/snowflake_trusted_tle.sql), sourced by
# test/trusted/run.sh after its plain part, with its helpers (q, check, sqlstate, same_state, judge_states, check_objects,
# check_ids, check_edges) and roles. Runs only where pg_tle is installed for the major under
# test; pg_tle is never built here (no Debian suite packages it: docs/managed.md says how it
# was built and installed by hand for the run reported there). On its own server, with
# shared_preload_libraries = 'pg_tle':
#   9. A member of pgtle_admin who is not a superuser installs the generated file; a role
#      without pgtle_admin may not (42501). The database owner, no superuser either, runs
#      CREATE EXTENSION snowflake_trusted: every object in public is the extension's (also the
#      generators that snowflake_configure writes again), nothing is LANGUAGE c, everything is
#      commented; the refusals and privileges of the plain part; 100,000 IDs of each kind and
#      the edge values, judged by the C extension in another database.
#  10. ALTER EXTENSION ... UPDATE at the only version changes nothing.
#  11. pg_dump and restore, both ways docs/managed.md gives: the whole database by a superuser
#      (pg_dump | psql), and by the owner alone (pg_dump -Fc, pg_restore of the entries that are
#      not pg_tle's into a database where pg_tle and the edition are installed): the
#      configuration and the counters come back, snowflake() issues at once on shard 5, above
#      every ID issued before the dump; who owns the restored objects.
#  12. DROP EXTENSION leaves nothing in public; CREATE EXTENSION ... SCHEMA ids works there;
#      pgtle.uninstall_extension removes the install.
#  13. The types ulid, sno, rsxid and ksuid (trusted/src/types_tle.sql), in a database owned by
#      the pgtle_admin member who creates the extension: their sizes beside the C types'; N
#      values of each kind (ulid()'s into a ulid column, random bytes and the edges for each)
#      whose text both ways, bytes, time and order (by id::bytea) equal the C extension's; the
#      operators on neighbours; = and ranges served by an index on (id::bytea); bad text and
#      bad lengths with the C extension's SQLSTATEs; what needs an operator class (a
#      superuser's) refused: PRIMARY KEY, ORDER BY and GROUP BY on the type.

TLE_LIB=$("$PG_CONFIG" --pkglibdir)/pg_tle.so
TLE_CONTROL=$("$PG_CONFIG" --sharedir)/extension/pg_tle.control
if [ ! -e "$TLE_LIB" ] || [ ! -e "$TLE_CONTROL" ]; then
  echo "the pg_tle part skips on PostgreSQL $PG_MAJOR: pg_tle is not installed for this major ($([ -e "$TLE_LIB" ] && echo "$TLE_CONTROL" || echo "$TLE_LIB")); no Debian suite packages it"
  return 0
fi

TDIR=$WORK/trusted-tle
ADMIN=tr_tle_admin
as_user rm -rf "$TDIR"
as_user mkdir -p "$TDIR/out"
start_server "$TDIR" "${SNOWFLAKE_TRUSTED_TLE_PORT:-54394}" <<'CONF'
shared_preload_libraries = 'pg_tle'
max_connections = 20
CONF
trap 'as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m immediate stop >/dev/null 2>&1 || true' EXIT
CONN=(-h "$SERVER_SOCK" -p "$SERVER_PORT")
echo "(the pg_tle part: pg_tle $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$TLE_CONTROL"), $TLE_LIB)"

# 9. install by a pgtle_admin member, CREATE EXTENSION by the owner; neither is a superuser
q postgres postgres "CREATE ROLE $OWNER LOGIN NOSUPERUSER NOCREATEROLE" "CREATE ROLE $OTHER LOGIN" \
  "CREATE ROLE $ADMIN LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \
  "CREATE DATABASE $DB OWNER $OWNER" "CREATE DATABASE $CDB" >/dev/null
# pg_tle itself is the superuser's to create (its control file says superuser); it creates
# the role pgtle_admin
q postgres "$DB" 'CREATE EXTENSION pg_tle' "GRANT pgtle_admin TO $ADMIN" >/dev/null
q postgres "$CDB" 'CREATE EXTENSION snowflake' >/dev/null 2>&1
check "pg_tle is preloaded" pg_tle "$(q postgres postgres 'SHOW shared_preload_libraries')"
check "the installing admin and the owner are no superusers; the admin is a member of pgtle_admin" "f|f|t" \
  "$(q postgres postgres "SELECT a.rolsuper, o.rolsuper, pg_has_role(a.oid, 'pgtle_admin', 'MEMBER')
    FROM pg_roles a, pg_roles o WHERE a.rolname = '$ADMIN' AND o.rolname = '$OWNER'")"
check "the installer by a role without pgtle_admin: 42501" 42501 \
  "$(sqlstate "$OWNER" "$DB" "SELECT pgtle.install_extension('snowflake_trusted', '0.1.0', 'x', 'SELECT 1')")"
if "${PSQL[@]}" -U "$ADMIN" -d "$DB" -f "$ROOT/trusted/snowflake_trusted_tle.sql" >"$TDIR/out/install" 2>&1; then
  ok "the pg_tle installer runs as a pgtle_admin member who is not a superuser"
else
  bad "the pg_tle installer failed: $(tail -n 5 "$TDIR/out/install")"
fi
check "pg_tle lists the edition at 0.1.0" "snowflake_trusted|0.1.0|pg_tle" \
  "$(q "$OWNER" "$DB" "SELECT name, default_version, array_to_string(requires, ',') FROM pgtle.available_extensions() WHERE name = 'snowflake_trusted'")"
notice=$(q "$OWNER" "$DB" 'CREATE EXTENSION snowflake_trusted' 2>&1 >/dev/null)
check "CREATE EXTENSION by an owner without pgtle_admin: none of the types, and a WARNING that says why" "0|1" \
  "$(q "$OWNER" "$DB" "SELECT count(*) FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typname IN ('ulid', 'sno', 'rsxid', 'ksuid')")|$(grep -c 'pg_tle makes a type only for a member of pgtle_admin' <<<"$notice")"
# every object in public, and the generators once snowflake_configure has written them again
not_members="SELECT count(*) FROM (
    SELECT 'pg_proc'::regclass AS cls, p.oid FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    UNION ALL SELECT 'pg_class', c.oid FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
  ) o WHERE NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.cls AND d.objid = o.oid AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_trusted'))"
check "CREATE EXTENSION by the owner: version 0.1.0, owner's, every object in public is the extension's" \
  "0.1.0|$OWNER|0" "$(q "$OWNER" "$DB" "SELECT extversion, pg_get_userbyid(extowner), ($not_members) FROM pg_extension WHERE extname = 'snowflake_trusted'")"
check_objects "$DB"
check "there are SECURITY DEFINER functions, and every one pins search_path" "t|0" \
  "$(q "$OWNER" "$DB" "SELECT count(*) > 0, count(*) FILTER (WHERE proconfig IS DISTINCT FROM '{\"search_path=pg_catalog, public, pg_temp\"}')
    FROM pg_proc WHERE prosecdef AND pronamespace = 'public'::regnamespace")"
check "snowflake() before snowflake_configure: 55000" 55000 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake()')"
check "snowflake_configure by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_configure(shard_id => 6)')"
check "snowflake_configure(shard_id => 5) by the owner, then snowflake() on shard 5" 5 \
  "$(q "$OWNER" "$DB" 'SELECT snowflake_configure(shard_id => 5)' >/dev/null && q "$OTHER" "$DB" 'SELECT snowflake_shard(snowflake())')"
check "after snowflake_configure every object in public is still the extension's" 0 "$(q "$OWNER" "$DB" "$not_members")"
check "setval on the counter by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" "SELECT setval('snowflake_counter', 1)")"
check "the generator writer by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake_trusted_write_generators()')"
check "snowflake(shard) by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'SELECT snowflake(3)')"
check "a second configuration row by another role: 42501" 42501 "$(sqlstate "$OTHER" "$DB" 'INSERT INTO snowflake_config DEFAULT VALUES')"
check "snowflake() is inlined: no function call of ours on the fast path" 1 \
  "$(q "$OWNER" "$DB" 'EXPLAIN (VERBOSE, COSTS OFF) SELECT snowflake()' | grep -c 'nextval(.snowflake_counter.::regclass)')"
check_ids "$DB" "$CDB" "$TDIR/out"
check_edges "$DB" "$CDB"

# 10. ALTER EXTENSION UPDATE at the only version
defs="SELECT md5(string_agg(pg_get_functiondef(p.oid), '' ORDER BY p.oid)) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace"
before=$(q "$OWNER" "$DB" "$defs")
notice=$("${PSQL[@]}" -U "$OWNER" -d "$DB" -c 'ALTER EXTENSION snowflake_trusted UPDATE' 2>&1) || bad "ALTER EXTENSION snowflake_trusted UPDATE failed: $notice"
check "ALTER EXTENSION UPDATE at 0.1.0: already installed, no function changed, still shard 5" \
  "1|0.1.0|$before|5" "$(grep -c 'version "0.1.0" of extension "snowflake_trusted" is already installed' <<<"$notice")|$(q "$OWNER" "$DB" \
    "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_trusted'")|$(q "$OWNER" "$DB" "$defs")|$(q "$OTHER" "$DB" 'SELECT snowflake_shard(snowflake())')"

# 11. pg_dump and restore
counters="SELECT pg_sequence_last_value('snowflake_counter'), pg_sequence_last_value('snowflake_counter128'), (SELECT c::text FROM snowflake_config c)"
last_id=$(q "$OTHER" "$DB" 'SELECT snowflake()')
dumped=$(q "$OWNER" "$DB" "$counters")
"$PG_BIN/pg_dump" "${CONN[@]}" -U postgres -d "$DB" -f "$TDIR/out/all.sql"
"$PG_BIN/pg_dump" "${CONN[@]}" -U "$OWNER" -d "$DB" -Fc -f "$TDIR/out/owner.dump"
# (a) the whole database, by a superuser, into a new database of the same owner: refused at
# CREATE EXTENSION, as a superuser's install is, since the owner may create in public and the
# edition's SECURITY DEFINER functions would then run what the owner put there, as the superuser
q postgres postgres "CREATE DATABASE restored_su OWNER $OWNER" >/dev/null
su_out=$("${PSQL[@]}" -d restored_su -v VERBOSITY=verbose -f "$TDIR/out/all.sql" 2>&1 >/dev/null || true)
check "pg_dump | psql by a superuser, where the owner may create in public: 42501, naming the owner" "1|1" \
  "$(grep -c 'ERROR:  42501: other roles may create objects in schema public' <<<"$su_out")|$(grep -c "Roles that may: $OWNER" <<<"$su_out")"
# (b) by the owner alone: pg_tle and the edition installed as for a first install, then
# pg_restore of every entry but pg_tle's own (its schema, extension and functions)
q postgres postgres "CREATE DATABASE restored_owner OWNER $OWNER" >/dev/null
q postgres restored_owner 'CREATE EXTENSION pg_tle' >/dev/null
"${PSQL[@]}" -U "$ADMIN" -d restored_owner -q -f "$ROOT/trusted/snowflake_trusted_tle.sql" >/dev/null
"$PG_BIN/pg_restore" -l "$TDIR/out/owner.dump" | grep -Ev ' (pgtle|pg_tle)( |$)' >"$TDIR/out/owner.list"
if "$PG_BIN/pg_restore" "${CONN[@]}" -U "$OWNER" -d restored_owner --exit-on-error -L "$TDIR/out/owner.list" \
  "$TDIR/out/owner.dump" >"$TDIR/out/restore_owner" 2>&1; then
  ok "pg_dump -Fc and pg_restore by the owner, who is no superuser: no error"
else
  bad "the owner's restore failed: $(head -n 3 "$TDIR/out/restore_owner")"
fi
for rdb in restored_owner; do
  check "$rdb: the counters and the configuration as dumped" "$dumped" "$(q "$OWNER" "$rdb" "$counters")"
  check "$rdb: snowflake() issues at once on shard 5, above every ID issued before the dump; every object is the extension's" \
    "5|t|0" "$(q "$OTHER" "$rdb" "SELECT snowflake_shard(x), x > $last_id FROM (SELECT snowflake() x) s")|$(q "$OWNER" "$rdb" "$not_members")"
done
# pg_dump records no owner for an extension: CREATE EXTENSION's runner owns its objects
check "who owns the restored snowflake_configure: the owner who restored" \
  "$OWNER" "$(q postgres restored_owner "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'snowflake_configure'")"

# 12. DROP EXTENSION, then uninstall
q "$OWNER" "$DB" 'DROP EXTENSION snowflake_trusted' >/dev/null
check "DROP EXTENSION leaves no function, table, sequence or type in public" 0 "$(q "$OWNER" "$DB" "SELECT
  (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace)
  + (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace)
  + (SELECT count(*) FROM pg_type WHERE typnamespace = 'public'::regnamespace)")"
# into a schema of its own, named by CREATE EXTENSION ... SCHEMA, called from search_path = pg_catalog
check "CREATE EXTENSION ... SCHEMA ids: configured and called there, schema-qualified" "7|t|t" "$(q "$OWNER" "$DB" \
  'CREATE SCHEMA ids' 'GRANT USAGE ON SCHEMA ids TO PUBLIC' 'CREATE EXTENSION snowflake_trusted SCHEMA ids' \
  'SET search_path = pg_catalog' 'SELECT (ids.snowflake_configure(shard_id => 7)).shard_id' >/dev/null && q "$OTHER" "$DB" \
  'SET search_path = pg_catalog' "SELECT ids.snowflake_shard(ids.snowflake()), ids.ulid_timestamp(ids.ulid()) IS NOT NULL,
    ids.uuidv7_timestamp(ids.snowflake_uuidv7()) IS NOT NULL")"
q "$OWNER" "$DB" 'DROP EXTENSION snowflake_trusted' 'DROP SCHEMA ids' >/dev/null
q "$ADMIN" "$DB" "SELECT pgtle.uninstall_extension('snowflake_trusted')" >/dev/null
check "pgtle.uninstall_extension removes the install (pg_tle's functions of it and the listing)" "0|0" \
  "$(q "$OWNER" "$DB" "SELECT (SELECT count(*) FROM pgtle.available_extensions() WHERE name = 'snowflake_trusted'),
    (SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE 'snowflake_trusted%')")"

# 13. the types, made by a member of pgtle_admin who owns the database (no superuser)
TYPES_DB=trusted_tle_types
q postgres postgres "CREATE DATABASE $TYPES_DB OWNER $ADMIN" >/dev/null
q postgres "$TYPES_DB" 'CREATE EXTENSION pg_tle' >/dev/null
"${PSQL[@]}" -U "$ADMIN" -d "$TYPES_DB" -q -f "$ROOT/trusted/snowflake_trusted_tle.sql" >/dev/null
q "$ADMIN" "$TYPES_DB" 'CREATE EXTENSION snowflake_trusted' 'SELECT snowflake_configure(shard_id => 5)' >/dev/null
# each type's length and a value's size, in the trusted database and in the C extension's
sizes="SELECT string_agg(format('%s %s %s', t.typname, t.typlen, k.size), ',' ORDER BY t.typname)
  FROM (VALUES ('ulid', pg_column_size('01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid)), ('sno', pg_column_size('2222222222222222'::sno)),
    ('rsxid', pg_column_size('00000000000000000000'::rsxid)), ('ksuid', pg_column_size('000000000000000000000000000'::ksuid))) k(name, size)
  JOIN pg_type t ON t.typname = k.name AND t.typnamespace = 'public'::regnamespace"
check "CREATE EXTENSION by a pgtle_admin member: ulid, sno, rsxid, ksuid of 20, 14, 16, 24 bytes (type length, a value's pg_column_size)" \
  "ksuid 24 24,rsxid 16 16,sno 14 14,ulid 20 20" "$(q "$ADMIN" "$TYPES_DB" "$sizes")"
check "the C extension's types: 16, 10, 12, 20 bytes" "ksuid 20 20,rsxid 12 12,sno 10 10,ulid 16 16" "$(q postgres "$CDB" "$sizes")"
check "every object in public is the extension's (the types too); the only LANGUAGE c functions are pg_tle's 8 I/O functions; every function and type is commented" \
  "0|8|8|0" "$(q "$ADMIN" "$TYPES_DB" "SELECT ($not_members) + (SELECT count(*) FROM pg_type t WHERE t.typnamespace = 'public'::regnamespace
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype IN ('e', 'i')))" \
    "SELECT count(*), count(*) FILTER (WHERE p.probin = '\$libdir/pg_tle') FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
      WHERE l.lanname = 'c' AND p.pronamespace = 'public'::regnamespace" \
    "SELECT (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL)
      + (SELECT count(*) FROM pg_type t WHERE t.typnamespace = 'public'::regnamespace AND t.typcategory <> 'A' AND t.typrelid = 0
         AND obj_description(t.oid, 'pg_type') IS NULL)" | paste -sd'|')"

check "ulid_timestamp of a literal, in either form, as the C extension's" \
  "$(q postgres "$CDB" "SELECT ulid_timestamp('01ARZ3NDEKTSV4RRFFQ69G5FAV'), ulid_timestamp('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4051')")" \
  "$(q "$OTHER" "$TYPES_DB" "SELECT ulid_timestamp('01ARZ3NDEKTSV4RRFFQ69G5FAV'), ulid_timestamp('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4051')")"
# ulid() into a ulid column with a unique index on its bytes: N values, judged by the C extension
tout=$TDIR/out
"${PSQL[@]}" -U "$OTHER" -d "$TYPES_DB" -At -v ON_ERROR_STOP=1 \
  -c "CREATE TEMP TABLE ulids (i int, id ulid DEFAULT ulid())" -c "CREATE UNIQUE INDEX ON ulids ((id::bytea))" \
  -c "INSERT INTO ulids (i) SELECT i FROM generate_series(1, $N) i" \
  -c "\\copy (SELECT i, encode(id::bytea, 'hex'), id::text, ulid_timestamp(id), rank() OVER (ORDER BY id::bytea) FROM ulids) TO '$tout/ulid_type.csv' CSV" \
  >/dev/null 2>"$tout/ulid_type.err" || bad "ulid() into a ulid column: $(head -n 3 "$tout/ulid_type.err")"
check "ulid() into a ulid column: $N values; the C extension reads each hex as the same ulid text and time, ranks them as ORDER BY id::bytea does, in issue order" \
  "$N|$N|0|0|0" "$(q postgres "$CDB" "CREATE TEMP TABLE g (i int, hex text, txt text, ts timestamptz, r bigint)" \
    "\\copy g FROM '$tout/ulid_type.csv' CSV" \
    "SELECT count(*), count(DISTINCT u), count(*) FILTER (WHERE u::text <> txt OR ulid_timestamp(u) <> ts),
       count(*) FILTER (WHERE c_rank <> r), count(*) FILTER (WHERE c_rank <> i)
     FROM (SELECT *, rank() OVER (ORDER BY u) AS c_rank FROM (SELECT *, hex::uuid::ulid AS u FROM g) x) y" | tail -n 1)"

# every kind: N random values and the edges (all zero, all one bits), made by the C extension,
# read by the type's input in one session per kind (the four at once: pg_tle calls the
# PL/pgSQL text functions once a value)
for kind in ulid sno rsxid ksuid; do
  case $kind in ulid) len=16 ;; sno) len=10 ;; rsxid) len=12 ;; ksuid) len=20 ;; esac
  (
    "${PSQL[@]}" -U postgres -d "$CDB" -At -v ON_ERROR_STOP=1 -c "\\copy (SELECT i, encode(b, 'hex'), v::text, ${kind}_timestamp(v),
        rank() OVER (ORDER BY v) FROM (SELECT i, b, bytea_to_$kind(b) AS v FROM (
          SELECT i, substring(decode(md5(random()::text) || md5(random()::text), 'hex') FROM 1 FOR $len) AS b FROM generate_series(1, $N) i
          UNION ALL SELECT 0, decode(repeat('00', $len), 'hex') UNION ALL SELECT -1, decode(repeat('ff', $len), 'hex')) r) s)
        TO '$tout/$kind.c.csv' CSV" >/dev/null
    "${PSQL[@]}" -U "$OTHER" -d "$TYPES_DB" -At -v ON_ERROR_STOP=1 \
      -c "CREATE TEMP TABLE c (i int, hex text, txt text, ts timestamptz, r bigint)" -c "\\copy c FROM '$tout/$kind.c.csv' CSV" \
      -c "CREATE TEMP TABLE v AS SELECT c.*, txt::$kind AS id FROM c" \
      -c "SELECT 'values', count(*), count(*) FILTER (WHERE id::bytea <> decode(hex, 'hex')), count(*) FILTER (WHERE id::text <> txt),
            count(*) FILTER (WHERE ${kind}_timestamp(id) IS DISTINCT FROM ts), count(*) FILTER (WHERE my_rank <> r)
          FROM (SELECT *, rank() OVER (ORDER BY id::bytea) AS my_rank FROM v) x" \
      -c "SELECT 'bytes', count(*), count(*) FILTER (WHERE ${kind}_to_bytea(bytea_to_$kind(decode(hex, 'hex'))) <> decode(hex, 'hex')
            OR decode(hex, 'hex')::$kind::bytea <> decode(hex, 'hex')) FROM c WHERE i <= 1000" \
      -c "SELECT 'ops', count(*) FILTER (WHERE NOT (a = a AND NOT a <> a AND a < b AND a <= b AND b > a AND b >= a AND a <> b AND NOT a = b
            AND NOT b < a AND NOT a > b AND NOT b <= a AND NOT a >= b AND sign(${kind}_cmp(a, b)) = -1 AND sign(${kind}_cmp(b, a)) = 1
            AND ${kind}_cmp(a, a) = 0))
          FROM (SELECT id AS a, lead(id) OVER (ORDER BY r) AS b FROM v) p WHERE b IS NOT NULL" \
      -c "CREATE UNIQUE INDEX ON v ((id::bytea))" -c 'ANALYZE v' -c 'SET enable_seqscan = off' \
      -c "EXPLAIN (COSTS OFF) SELECT * FROM v WHERE id = (SELECT txt FROM c WHERE i = 1)::$kind" \
      -c "EXPLAIN (COSTS OFF) SELECT * FROM v WHERE id >= (SELECT txt FROM c WHERE i = 1)::$kind AND id < (SELECT txt FROM c WHERE i = -1)::$kind"
  ) >"$tout/$kind.types.out" 2>&1 &
done
wait
for kind in ulid sno rsxid ksuid; do
  res=$tout/$kind.types.out
  check "$kind: $N random values and the edges: the bytes, text out, time and order (ORDER BY id::bytea) of the text read in equal the C extension's" \
    "values|$((N + 2))|0|0|0|0" "$(grep '^values|' "$res" || head -n 3 "$res")"
  check "$kind: bytea_to_$kind and the bytea casts both ways keep the bytes (1,000 values and the edges)" "bytes|$(( (N < 1000 ? N : 1000) + 2 ))|0" "$(grep '^bytes|' "$res")"
  check "$kind: = <> < <= > >= and ${kind}_cmp on the neighbours of the C extension's order" "ops|0" "$(grep '^ops|' "$res")"
  check "$kind: = and a range use the index on (id::bytea)" "1|1" \
    "$(grep -c 'Index Cond: ((id)::bytea = ' "$res")|$(grep -c 'Index Cond: (((id)::bytea >= .* AND ((id)::bytea < ' "$res")"
done

# bad input: the C extension's SQLSTATEs (22P02 for text, 22P03 for a length of bytes)
for bad_in in "'x'::ulid" "'8ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid" "'01ARZ3NDEKTSV4RRFFQ69G5FAU'::ulid" \
  "'01563e3a-b5d3-d676-4c61-efb99302bd5g'::ulid" "'01563e3ab5d3d6764c61efb99302bd5b'::ulid" "'\\x01'::bytea::ulid" \
  "'x'::sno" "'!!!!!!!!!!!!!!!!'::sno" "'\\x01'::bytea::sno" \
  "'x'::rsxid" "'zzzzzzzzzzzzzzzzzzzz'::rsxid" "'\\x01'::bytea::rsxid" \
  "'x'::ksuid" "'zzzzzzzzzzzzzzzzzzzzzzzzzzz'::ksuid" "'!!!!!!!!!!!!!!!!!!!!!!!!!!!'::ksuid" "'\\x01'::bytea::ksuid"; do
  same_state "SELECT $bad_in" "SELECT $bad_in"
done
judge_states "$TYPES_DB"

# what needs an operator class, which PostgreSQL lets only a superuser create
check "no operator class: PRIMARY KEY on a ulid refused (42704), ORDER BY and GROUP BY a ulid refused (42883); ORDER BY id::bytea works" \
  "42704|42883|42883|none" "$(sqlstate "$ADMIN" "$TYPES_DB" 'CREATE TEMP TABLE pk (id ulid PRIMARY KEY)')|$(sqlstate "$OTHER" "$TYPES_DB" \
    'SELECT id FROM (VALUES (ulid()::ulid)) v(id) ORDER BY id')|$(sqlstate "$OTHER" "$TYPES_DB" \
    'SELECT id FROM (VALUES (ulid()::ulid)) v(id) GROUP BY id')|$(sqlstate "$OTHER" "$TYPES_DB" 'SELECT id FROM (VALUES (ulid()::ulid)) v(id) ORDER BY id::bytea')"
q "$ADMIN" "$TYPES_DB" 'DROP EXTENSION snowflake_trusted' >/dev/null
check "DROP EXTENSION takes the types and pg_tle's functions of them" 0 "$(q "$ADMIN" "$TYPES_DB" "SELECT
  (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace) + (SELECT count(*) FROM pg_type WHERE typnamespace = 'public'::regnamespace)")"

as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m fast stop >/dev/null
trap - EXIT
