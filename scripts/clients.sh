# The block allocators' packages and programs, installed and built in the work folder for the
# driver suite and bench/blocks.sh. Sourced after common.sh, once prepare_work and
# build_and_install have run.

# What they need: Debian's Go with lib/pq and pgx v4, its JDK and pgjdbc, Python's venv, pip,
# setuptools and wheel (to install clients/python offline), and Node.js and npm, unless the
# machine has a node and an npm already (NodeSource's nodejs, for one, provides npm and
# conflicts with Debian's npm package).
client_packages=(golang-go golang-github-lib-pq-dev golang-github-jackc-pgx-v4-dev
  default-jdk-headless libpostgresql-jdbc-java python3-venv python3-pip python3-setuptools
  python3-wheel)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then client_packages+=(nodejs npm); fi

# The JavaScript packages of test/drivers, into its node_modules in the work tree: pg 8 and
# pg-copy-streams, pinned by package-lock.json, and the client package clients/js, packed and
# copied as npm installs a registry's package (install-links; test/drivers/.npmrc says so too),
# not linked to the folder.
npm_ci_drivers() {
  local dir=$WORK/tree/test/drivers
  log "node $(node --version), npm $(npm --version): npm ci in $dir"
  as_user env npm_config_cache="$WORK/npm-cache" npm_config_update_notifier=false \
    npm ci --prefix "$dir" --install-links --no-audit --no-fund >/dev/null
}

# The Python client package, clients/python, installed by pip into a virtual environment of the
# work folder, offline (no package index: Debian's setuptools and wheel build it), as its README
# says; the environment sees the system's packages (psycopg, psycopg2). Built from a copy, so
# that the build leaves nothing in the work tree. Sets CLIENT_PYTHON, the environment's python3.
install_python_client() {
  local venv=$WORK/client-venv
  as_user rm -rf "$venv" "$WORK/client-python"
  as_user cp -r "$WORK/tree/clients/python" "$WORK/client-python"
  log "$(/usr/bin/python3 --version): pip install clients/python into $venv"
  # Debian's python3, whatever else PATH holds: its venv sees Debian's setuptools and wheel.
  as_user /usr/bin/python3 -m venv --system-site-packages "$venv"
  as_user env PIP_CACHE_DIR="$WORK/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/pip" install --quiet --no-index --no-build-isolation "$WORK/client-python"
  CLIENT_PYTHON=$venv/bin/python3
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

# The Java allocator, the batching recipe and their test, and the JDBC driver table's test
# (java/TypesTest.java), compiled against Debian's pgjdbc.
# Sets JDBC_JAR and JAVA_CLASSES.
build_java_blocks() {
  JDBC_JAR=/usr/share/java/postgresql.jar
  JAVA_CLASSES=$WORK/java-blocks
  as_user rm -rf "$JAVA_CLASSES"
  log "$(javac -version 2>&1): compiling the Java allocator"
  as_user javac -Xlint:all -Werror -d "$JAVA_CLASSES" -cp "$JDBC_JAR" \
    "$WORK/tree/clients/java/snowflake/IdBlocks.java" "$WORK/tree/test/drivers"/java/*.java
}
