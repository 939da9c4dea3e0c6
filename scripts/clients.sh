# The block allocators' programs of the driver suite, built in the work folder for it and for
# bench/blocks.sh. Sourced after common.sh, once prepare_work and build_and_install have run.

# What the allocators' programs need: Debian's Go with lib/pq and pgx v4, its JDK and pgjdbc,
# and its Node.js and npm, unless the machine has a node and an npm already (NodeSource's
# nodejs, for one, provides npm and conflicts with Debian's npm package).
client_packages=(golang-go golang-github-lib-pq-dev golang-github-jackc-pgx-v4-dev
  default-jdk-headless libpostgresql-jdbc-java)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then client_packages+=(nodejs npm); fi

# The JavaScript client's packages (pg 8, pinned by package-lock.json), into test/drivers of
# the work tree.
npm_ci_drivers() {
  local dir=$WORK/tree/test/drivers
  log "node $(node --version), npm $(npm --version): npm ci in $dir"
  as_user env npm_config_cache="$WORK/npm-cache" npm_config_update_notifier=false \
    npm ci --prefix "$dir" --no-audit --no-fund >/dev/null
}

# goblocks, the Go allocator's test, built offline in GOPATH mode (GO111MODULE=off), as Debian
# builds its Go packages: the package from clients/go beside it in a GOPATH of the work folder,
# Debian's lib/pq and pgx v4 after it. Sets GOBLOCKS (the binary is $GOBLOCKS/goblocks).
build_goblocks() {
  GOBLOCKS=$WORK/goblocks
  as_user rm -rf "$GOBLOCKS"
  as_user mkdir -p "$GOBLOCKS/path/src/goblocks"
  as_user cp -r "$WORK/tree/clients/go/snowflakeblock" "$GOBLOCKS/path/src/"
  as_user cp "$WORK/tree/test/drivers"/goblocks/*.go "$GOBLOCKS/path/src/goblocks/"
  log "building goblocks"
  as_user env -C "$GOBLOCKS/path/src/goblocks" GO111MODULE=off GOPROXY=off GOFLAGS=-buildvcs=false \
    GOTOOLCHAIN=local GOCACHE="$WORK/go-cache" GOPATH="$GOBLOCKS/path:/usr/share/gocode" \
    go build -o "$GOBLOCKS/goblocks" .
}

# The Java allocator, the batching recipe and their test, compiled against Debian's pgjdbc.
# Sets JDBC_JAR and JAVA_CLASSES.
build_java_blocks() {
  JDBC_JAR=/usr/share/java/postgresql.jar
  JAVA_CLASSES=$WORK/java-blocks
  as_user rm -rf "$JAVA_CLASSES"
  log "$(javac -version 2>&1): compiling the Java allocator"
  as_user javac -Xlint:all -Werror -d "$JAVA_CLASSES" -cp "$JDBC_JAR" \
    "$WORK/tree/clients/java/snowflake/IdBlocks.java" "$WORK/tree/test/drivers"/java/*.java
}
