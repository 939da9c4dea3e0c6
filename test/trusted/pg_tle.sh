# shellcheck shell=bash
# The trusted edition as a pg_tle extension (trusted/snowflake_trusted_tle.sql), sourced by
# test/trusted/run.sh after its plain part, with its helpers (q, check, sqlstate, check_objects,
# check_ids, check_edges) and roles. Runs only where pg_tle is installed for the major under
# test; pg_tle is never built here (no Debian suite packages it: docs/managed.md says how it
# was built and installed by hand for the run reported there). On its own server, with
# shared_preload_libraries = 'pg_tle':
#   7. A member of pgtle_admin who is not a superuser installs the generated file; a role
#      without pgtle_admin may not (42501). The database owner, no superuser either, runs
#      CREATE EXTENSION snowflake_trusted: every object in public is the extension's (also the
#      generators that snowflake_configure writes again), nothing is LANGUAGE c, everything is
#      commented; the refusals and privileges of the plain part; 100,000 IDs of each kind and
#      the edge values, judged by the C extension in another database.
#   8. ALTER EXTENSION ... UPDATE at the only version changes nothing.
#   9. pg_dump and restore, both ways docs/managed.md gives: the whole database by a superuser
#      (pg_dump | psql), and by the owner alone (pg_dump -Fc, pg_restore of the entries that are
#      not pg_tle's into a database where pg_tle and the edition are installed): the
#      configuration and the counters come back, snowflake() issues at once on shard 5, above
#      every ID issued before the dump; who owns the restored objects.
#  10. DROP EXTENSION leaves nothing in public; CREATE EXTENSION ... SCHEMA ids works there;
#      pgtle.uninstall_extension removes the install.

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

# 7. install by a pgtle_admin member, CREATE EXTENSION by the owner; neither is a superuser
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
q "$OWNER" "$DB" 'CREATE EXTENSION snowflake_trusted' >/dev/null
# every object in public, and the generators once snowflake_configure has written them again
not_members="SELECT count(*) FROM (
    SELECT 'pg_proc'::regclass AS cls, p.oid FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    UNION ALL SELECT 'pg_class', c.oid FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
  ) o WHERE NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.cls AND d.objid = o.oid AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_trusted'))"
check "CREATE EXTENSION by the owner: version 0.1.0, owner's, every object in public is the extension's" \
  "0.1.0|$OWNER|0" "$(q "$OWNER" "$DB" "SELECT extversion, pg_get_userbyid(extowner), ($not_members) FROM pg_extension WHERE extname = 'snowflake_trusted'")"
check_objects "$DB"
check "the SECURITY DEFINER functions pin search_path" 3 \
  "$(q "$OWNER" "$DB" "SELECT count(*) FROM pg_proc WHERE prosecdef AND pronamespace = 'public'::regnamespace
    AND proconfig = '{\"search_path=pg_catalog, public, pg_temp\"}'")"
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

# 8. ALTER EXTENSION UPDATE at the only version
defs="SELECT md5(string_agg(pg_get_functiondef(p.oid), '' ORDER BY p.oid)) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace"
before=$(q "$OWNER" "$DB" "$defs")
notice=$("${PSQL[@]}" -U "$OWNER" -d "$DB" -c 'ALTER EXTENSION snowflake_trusted UPDATE' 2>&1) || bad "ALTER EXTENSION snowflake_trusted UPDATE failed: $notice"
check "ALTER EXTENSION UPDATE at 0.1.0: already installed, no function changed, still shard 5" \
  "1|0.1.0|$before|5" "$(grep -c 'version "0.1.0" of extension "snowflake_trusted" is already installed' <<<"$notice")|$(q "$OWNER" "$DB" \
    "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_trusted'")|$(q "$OWNER" "$DB" "$defs")|$(q "$OTHER" "$DB" 'SELECT snowflake_shard(snowflake())')"

# 9. pg_dump and restore
counters="SELECT pg_sequence_last_value('snowflake_counter'), pg_sequence_last_value('snowflake_counter128'), (SELECT c::text FROM snowflake_config c)"
last_id=$(q "$OTHER" "$DB" 'SELECT snowflake()')
dumped=$(q "$OWNER" "$DB" "$counters")
"$PG_BIN/pg_dump" "${CONN[@]}" -U postgres -d "$DB" -f "$TDIR/out/all.sql"
"$PG_BIN/pg_dump" "${CONN[@]}" -U "$OWNER" -d "$DB" -Fc -f "$TDIR/out/owner.dump"
# (a) the whole database, by a superuser, into a new database of the same owner
q postgres postgres "CREATE DATABASE restored_su OWNER $OWNER" >/dev/null
if "${PSQL[@]}" -d restored_su -f "$TDIR/out/all.sql" >"$TDIR/out/restore_su" 2>&1; then
  ok "pg_dump | psql by a superuser: no error"
else
  bad "the superuser's restore failed: $(grep ERROR "$TDIR/out/restore_su" | head -n 3)"
fi
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
for rdb in restored_su restored_owner; do
  check "$rdb: the counters and the configuration as dumped" "$dumped" "$(q "$OWNER" "$rdb" "$counters")"
  check "$rdb: snowflake() issues at once on shard 5, above every ID issued before the dump; every object is the extension's" \
    "5|t|0" "$(q "$OTHER" "$rdb" "SELECT snowflake_shard(x), x > $last_id FROM (SELECT snowflake() x) s")|$(q "$OWNER" "$rdb" "$not_members")"
done
# pg_dump records no owner for an extension: CREATE EXTENSION's runner owns its objects
check "who owns the restored snowflake_configure: the superuser who restored, the owner who restored" \
  "postgres|$OWNER" "$(q postgres restored_su "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'snowflake_configure'")|$(q postgres restored_owner \
    "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'snowflake_configure'")"

# 10. DROP EXTENSION, then uninstall
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

as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -m fast stop >/dev/null
trap - EXIT
