#!/usr/bin/env bash
# The IDs through real drivers: psycopg 3, psycopg2 and node-postgres (pg 8, pinned by
# package-lock.json and installed with npm ci into the work folder), and through the ORMs
# SQLAlchemy and Django (Debian's, on psycopg2) running the recipes of docs/applications.md
# (those with ID blocks on the Python package, so both run in its virtual environment), a
# ulid primary key looked up by uuid parameters in each driver (psycopg's, node-postgres's,
# Go's and JDBC's, the primary key's index in each plan); and masking, the server's tokens
# against the Python client's (mask_client.py), from one key file. All against a throwaway
# server with the extension preloaded; and scripts/mask_key.sh's uuidv47 key, read from
# standard input; ID blocks through the client packages as a user installs them: the Python
# one (clients/python, pip-installed offline into a virtual environment of the work folder;
# psycopg 3, 16 threads sharing one allocator) and the JavaScript one (clients/js, installed
# by npm ci from test/drivers/package.json's file: dependency; node-postgres, 50 concurrent
# callers, COPY); the Go allocator (clients/go/snowflakeblock) through database/sql with lib/pq
# and pgx v4, 16 goroutines and a service's handler (goblocks/, built offline); the Java
# allocator (clients/java) through JDBC, 16 threads and JDBC batches, and the JDBC row of the
# driver table (java/, compiled with Debian's JDK and pgjdbc, over loopback TCP, JDBC having no
# Unix sockets); and sno against a codec written from its published spec (test_sno_spec.py,
# sno_spec.py); and a Go program's sno bytes and the Go rows of the driver table through
# database/sql with lib/pq and pgx v4, and pgx v4's own interface (snogo/, built offline from
# Debian's drivers); and rsxid and ksuid against rs/xid and segmentio/ksuid (test_xidref.sh,
# with xidref/ built offline from Debian's).
# Exits non-zero when any of the fifteen fails.
source "$(dirname "$0")/../../scripts/common.sh"
source "$ROOT/scripts/clients.sh"

install_packages python3 python3-psycopg python3-psycopg2 python3-sqlalchemy python3-django \
  python3-cryptography openssl golang-github-rs-xid-dev golang-github-segmentio-ksuid-dev \
  "${client_packages[@]}"
installed_only
ensure_server_user
prepare_work
# The work tree outlives a run, and copying the sources adds and replaces files but removes
# none: this suite's folders start afresh, so that a module moved out of them (the clients'
# snowflake_block.py and .js, now packages) is not imported in place of the installed one.
as_user rm -rf "$WORK/tree/test/drivers" "$WORK/tree/clients"
# With SNOWFLAKE_DRIVERS_NO_BUILD=1 (scripts/test.sh, which built and installed this tree
# before), the sources alone: no install, which would replace the library under a server that
# another suite (arm64's, beside this one) is starting from it.
if [ -n "${SNOWFLAKE_DRIVERS_NO_BUILD:-}" ]; then copy_tree "$WORK/tree"; else build_and_install; fi

DIR=$WORK/tree/test/drivers
SHARD=37
npm_ci_drivers
install_python_client

# xidref, the rsxid and ksuid judges, built offline in the work folder from Debian's rs/xid and
# segmentio/ksuid, copied beside a copy of xidref/, which its go.mod's replace directives name.
# Go's caches in the work folder too; no version-control stamp (the work folder may sit in a
# git checkout owned by another user than the server's, whose status git refuses to read).
XIDREF=$WORK/xidref
as_user rm -rf "$XIDREF"
as_user mkdir -p "$XIDREF/src"
as_user cp "$DIR/xidref/main.go" "$DIR/xidref/go.mod" "$XIDREF/src/"
as_user cp -r /usr/share/gocode/src/github.com/rs/xid "$XIDREF/src/xid"
as_user cp -r /usr/share/gocode/src/github.com/segmentio/ksuid "$XIDREF/src/ksuid"
log "$(go version): building xidref"
as_user env -C "$XIDREF/src" GOPROXY=off GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local GOCACHE="$WORK/go-cache" \
  GOPATH="$WORK/go-path" go build -o "$XIDREF/xidref" .

# snogo, a Go program's sno bytes and the driver table's Go rows through database/sql with lib/pq
# and pgx v4, and pgx v4's own interface: built offline in GOPATH mode
# (GO111MODULE=off), as Debian builds its Go packages, so that Debian's lib/pq and pgx v4
# and all that pgx imports are found in /usr/share/gocode without a replace directive each.
SNOGO=$WORK/snogo
as_user rm -rf "$SNOGO"
as_user mkdir -p "$SNOGO/path/src/snogo"
as_user cp "$DIR"/snogo/*.go "$SNOGO/path/src/snogo/"
log "$(go version): building snogo"
as_user env -C "$SNOGO/path/src/snogo" GO111MODULE=off GOPROXY=off GOFLAGS=-buildvcs=false \
  GOTOOLCHAIN=local GOCACHE="$WORK/go-cache" GOPATH="$SNOGO/path:/usr/share/gocode" \
  go build -o "$SNOGO/snogo" .

# goblocks, the Go allocator's test, and the Java allocator's (scripts/clients.sh).
build_goblocks
build_java_blocks

# Two masking keys, 9 the active one, in a file only the server's user may read (the
# server refuses any other mode); the masking test's client reads the same file.
KEY_FILE=$WORK/drivers/mask.keys
as_user mkdir -p "$WORK/drivers"
as_user install -m 600 /dev/null "$KEY_FILE"
{
  echo "# masking keys of the driver tests: ID HEX [active]"
  "$ROOT/scripts/mask_key.sh" new 5 | sed 's/ active$//'
  "$ROOT/scripts/mask_key.sh" new 9
} | as_user tee "$KEY_FILE" >/dev/null

# On loopback TCP too, for JDBC; at the first free port from 54349 on.
start_server "$WORK/drivers" "${SNOWFLAKE_DRIVERS_PORT:-54349}" tcp <<CONF
snowflake.shard_id = $SHARD
snowflake.mask_key_file = '$KEY_FILE'
CONF
trap stop_server EXIT
# The data directory outlives a run: the extension's objects start afresh from this build's
# install script (a catalog of an earlier build, of the same version, would call this build's
# C functions with the arguments that build declared).
"${PSQL[@]}" -c 'SET client_min_messages = warning' -c 'DROP EXTENSION IF EXISTS snowflake CASCADE' \
  -c 'CREATE EXTENSION snowflake'

failed=()
drive() {
  local name=$1
  shift
  log "$name"
  as_user env -C "$DIR" PGHOST="$SERVER_SOCK" PGPORT="$SERVER_PORT" PGUSER=postgres \
    PGDATABASE=postgres SNOWFLAKE_TEST_SHARD="$SHARD" SNOWFLAKE_MASK_KEY_FILE="$KEY_FILE" "$@" ||
    failed+=("$name")
}
drive "psycopg 3" python3 test_psycopg.py
drive "psycopg2" python3 test_psycopg2.py
drive "node-postgres" node --test pg.test.js
drive "SQLAlchemy" "$CLIENT_PYTHON" test_sqlalchemy.py
drive "Django" "$CLIENT_PYTHON" test_django.py
drive "masking (Python client)" python3 test_mask.py
drive "ID blocks: the Python package, pip-installed (psycopg 3, 16 threads)" "$CLIENT_PYTHON" test_blocks.py
drive "ID blocks: the JavaScript package, npm-installed (node-postgres: IdBlocks, COPY)" node --test blocks.test.js
drive "ID blocks in Go (lib/pq, pgx v4)" "$GOBLOCKS/goblocks"
drive "ID blocks in Java (JDBC)" java -cp "$JAVA_CLASSES:$JDBC_JAR" BlocksTest \
  "jdbc:postgresql://127.0.0.1:$SERVER_PORT/postgres?user=postgres&reWriteBatchedInserts=true"
drive "JDBC: the driver table's row, a ulid key by a java.util.UUID" java -cp "$JAVA_CLASSES:$JDBC_JAR" TypesTest \
  "jdbc:postgresql://127.0.0.1:$SERVER_PORT/postgres?user=postgres"
drive "mask_key.sh uuidv47 (key on standard input)" bash test_mask_key.sh "$WORK/tree/scripts/mask_key.sh"
drive "sno against its published spec (an independent codec)" python3 test_sno_spec.py
drive "sno bytes, the driver table's Go rows, a ulid key by a uuid (lib/pq, pgx v4)" "$SNOGO/snogo"
drive "rsxid and ksuid against rs/xid and segmentio/ksuid" bash test_xidref.sh "$XIDREF/xidref" "$PG_BIN/psql"

if [ ${#failed[@]} -ne 0 ]; then
  echo "drivers failed: ${failed[*]}"
  exit 1
fi
echo "drivers: all fifteen passed"
