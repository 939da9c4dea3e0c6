#!/usr/bin/env bash
# What masking costs per row, on the executor floor's scale, in one server and one run:
# snowflake_mask() and snowflake_unmask() over generate_series, beside its count(1), the
# floor of bench/run.sh; uuidv7_mask(), uuidv7_unmask(), uuidv47_mask(), uuidv47_unmask(),
# ulid_mask() and ulid_unmask() over a table of --rows rows (id from snowflake(), u a
# UUIDv7, l a ULID), beside count(1) and count() of each column on that table. Each round
# runs every statement once, in one session, in a fixed order; the tables give the best
# round in ns per row, less its plain reading (ns a call), over the floor's best, and the
# median of the rounds' ratios to their floor.
# Where the server has them installed, the same work by pg_hashids (id_encode,
# id_decode_once) and by uuidv47's extension uuid47 (its façade with the key of uuid47.key,
# and with the key as an argument) runs in the same rounds; this repository ships neither.
# Starts a throwaway server with a key file of its own and stops it at the end. Writes
# bench/results/mask.md (or --out DIR).
#   bench/mask.sh [--runs N] [--rows N] [--quick] [--out DIR]
source "$(dirname "$0")/../scripts/common.sh"

RUNS=15
ROWS=1000000
OUT=$ROOT/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) RUNS=2; ROWS=20000; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

install_packages openssl
installed_only
ensure_server_user
prepare_work
build_and_install

DIR=$WORK/mask-bench
as_user rm -rf "$DIR"
as_user mkdir -p "$DIR"
# One master key, active, in a file only the server's user may read.
KEY_LINE=$("$ROOT/scripts/mask_key.sh" new 1)
KEY_FILE=$DIR/mask.keys
as_user install -m 600 /dev/null "$KEY_FILE"
echo "$KEY_LINE" | as_user tee "$KEY_FILE" >/dev/null
# uuidv47's key for the same façades.
UUID47_KEY=$(echo "$KEY_LINE" | cut -d' ' -f2 | "$ROOT/scripts/mask_key.sh" uuidv47)

# The table fits in shared buffers many times over (a scan of more than a quarter of them
# would go through a small ring); one backend per statement, no JIT: the same work each round.
start_server "$DIR" "${SNOWFLAKE_BENCH_PORT:-54381}" <<CONF
shared_buffers = '1GB'
max_parallel_workers_per_gather = 0
jit = off
snowflake.shard_id = 1
snowflake.mask_key_file = '$KEY_FILE'
CONF
trap stop_server EXIT
q() { as_user "${PSQL[@]}" -At -c "$1"; }
q "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS snowflake"

available() { [ "$(q "SELECT count(*) FROM pg_available_extensions WHERE name = '$1'")" = 1 ]; }
HASHIDS='' UUID47=''
if available pg_hashids; then
  HASHIDS=$(q "CREATE EXTENSION IF NOT EXISTS pg_hashids; SELECT extversion FROM pg_extension WHERE extname = 'pg_hashids'")
else
  log "pg_hashids is not installed for PostgreSQL $PG_MAJOR: its rows are left out"
fi
if available uuid47; then
  UUID47=$(q "CREATE EXTENSION IF NOT EXISTS uuid47; SELECT extversion FROM pg_extension WHERE extname = 'uuid47'")
else
  log "uuid47 is not installed for PostgreSQL $PG_MAJOR: its rows are left out"
fi

log "making the table: $ROWS rows"
q "CREATE TABLE mask_bench WITH (autovacuum_enabled = off) AS
   SELECT *$([ -z "$UUID47" ] || echo ", u::uuid47 AS u47")
     FROM (SELECT snowflake() AS id, snowflake_uuidv7() AS u, ulid() AS l
             FROM generate_series(1, $ROWS)) s"
q "VACUUM (FREEZE, ANALYZE) mask_bench"

# What each round runs, in order: the row's name (Markdown), the statement and what it
# measures. A row's floor is the last floor_row before it, and its base (what "ns a call"
# subtracts) the last floor_row or base_row before it.
# The bigint rows run over generate_series, as the executor's floor of bench/run.sh does, on
# IDs of today's size (a hashid's length grows with its number); the UUID and ULID rows over
# the table, whose values must exist beforehand.
FIRST=$(q "SELECT min(id) FROM mask_bench")
SERIES="generate_series($FIRST::bigint, $FIRST::bigint + $ROWS - 1) i"
NAMES=() SQLS=() WHATS=() FLOORS=() BASES=()
floor_at=0 base_at=0
row() {
  NAMES+=("$1") SQLS+=("$2") WHATS+=("$3")
  FLOORS+=("$floor_at") BASES+=("$base_at")
}
floor_row() { floor_at=${#NAMES[@]} base_at=${#NAMES[@]}; row "$@"; }
base_row() { base_at=${#NAMES[@]}; row "$@"; }
over() { row "\`$1\`" "SELECT count($1) FROM mask_bench" "$2"; }
K="'\\x$UUID47_KEY'::bytea"
floor_row "floor (\`1\`)" "SELECT count(1) FROM $SERIES" "the executor alone, over \`generate_series\`"
row "\`snowflake_mask(i)\`" "SELECT count(snowflake_mask(i)) FROM $SERIES" "a token"
row "\`snowflake_mask(i, 'ord')\`" "SELECT count(snowflake_mask(i, 'ord')) FROM $SERIES" "a token with a prefix"
row "\`snowflake_unmask(snowflake_mask(i))\`" "SELECT count(snowflake_unmask(snowflake_mask(i))) FROM $SERIES" \
  "a token and back"
row "\`snowflake_unmask(snowflake_mask(i, 'ord'), 'ord')\`" \
  "SELECT count(snowflake_unmask(snowflake_mask(i, 'ord'), 'ord')) FROM $SERIES" "a token with a prefix and back"
row "\`snowflake_mask(i, CASE … 'ord' … 'inv' END)\`" \
  "SELECT count(snowflake_mask(i, CASE WHEN i % 2 = 0 THEN 'ord' ELSE 'inv' END)) FROM $SERIES" \
  "a token, its prefix changing every row: no prefix's MAC is kept from one call to the next"
if [ -n "$HASHIDS" ]; then
  row "\`id_encode(i)\`" "SELECT count(id_encode(i)) FROM $SERIES" \
    "pg_hashids $HASHIDS: a hashid (no salt, the default alphabet)"
  row "\`id_decode_once(id_encode(i))\`" "SELECT count(id_decode_once(id_encode(i))) FROM $SERIES" \
    "pg_hashids: a hashid and back"
fi
floor_row "floor (\`1\`)" "SELECT count(1) FROM mask_bench" "the executor alone, over the table"
base_row "\`u\`" "SELECT count(u) FROM mask_bench" "reading the uuid column"
over "uuidv7_mask(u)" "a UUIDv4 façade, the time and rand_a hidden"
over "uuidv7_unmask(uuidv7_mask(u))" "a façade and back"
over "uuidv47_mask(u)" "uuidv47's façade (rand_a shown)"
over "uuidv47_unmask(uuidv47_mask(u))" "uuidv47's façade and back"
if [ -n "$UUID47" ]; then
  base_row "\`u47\`" "SELECT count(u47) FROM mask_bench" "reading the uuid47 column"
  over "uuid47_to_uuid(u47)" "uuid47 $UUID47: the façade of a uuid47 value, its key from \`uuid47.key\`"
  over "uuid47_to_uuid(u47)::uuid47" "uuid47: a façade and back (the cast decodes)"
  row "\`uuid47_to_uuid_with_key(u47, k)\`" "SELECT count(uuid47_to_uuid_with_key(u47, $K)) FROM mask_bench" \
    "uuid47: its key (bytea) as an argument"
  row "\`uuid_to_uuid47_with_key(uuid47_to_uuid_with_key(u47, k), k)\`" \
    "SELECT count(uuid_to_uuid47_with_key(uuid47_to_uuid_with_key(u47, $K), $K)) FROM mask_bench" \
    "uuid47: its key as an argument, a façade and back"
fi
base_row "\`l\`" "SELECT count(l) FROM mask_bench" "reading the ulid column"
over "ulid_mask(l)" "a masked ULID (AES-256 of its 16 bytes)"
over "ulid_unmask(ulid_mask(l))" "a masked ULID and back"

# Each measures what it should: every way back gives every row back, and uuid47 makes the
# same façades from the derived key.
checks=("snowflake_unmask(snowflake_mask(id)) = id" "snowflake_unmask(snowflake_mask(id, 'ord'), 'ord') = id"
  "uuidv7_unmask(uuidv7_mask(u)) = u" "uuidv47_unmask(uuidv47_mask(u)) = u"
  "ulid_unmask(ulid_mask(l)) = l")
[ -z "$HASHIDS" ] || checks+=("id_decode_once(id_encode(id)) = id")
[ -z "$UUID47" ] || checks+=("uuid47_to_uuid(u47) = uuidv47_mask(u)"
  "uuid47_to_uuid_with_key(u47, $K) = uuidv47_mask(u)"
  "uuid47_as_v7(uuidv47_mask(u)::uuid47) = u")
for c in "${checks[@]}"; do
  got=$(q "SET uuid47.key = '$UUID47_KEY'; SELECT count(*) FILTER (WHERE $c) FROM mask_bench")
  [ "$got" = "$ROWS" ] || die "only $got of $ROWS rows pass: $c"
done
log "checks: ${#checks[@]} of ${#checks[@]} hold on every row"

# A backend's first scan of a page costs it page faults on the shared buffers (here the
# first scan of the table took several times the next): each round's session reads every
# page and tuple once before the clock starts.
ROUND=$DIR/round.sql
{
  echo "SET uuid47.key = '$UUID47_KEY';"
  echo "SELECT count(id), count(l) FROM mask_bench;"
  echo '\timing on'
  printf '%s;\n' "${SQLS[@]}"
} | as_user tee "$ROUND" >/dev/null

# ns per row of each statement in one session, one a line, in order.
round() {
  as_user "${PSQL[@]}" -At -f "$ROUND" | awk -v rows="$ROWS" '/^Time: / { printf "%.3f\n", $2 * 1e6 / rows }'
}
round >/dev/null  # warm-up: the functions' first calls, the server's caches
TIMES=$DIR/times.tsv
as_user rm -f "$TIMES"
for run in $(seq "$RUNS"); do
  line=$(round | paste -sd '\t')
  [ "$(echo "$line" | awk -F '\t' '{ print NF }')" = "${#NAMES[@]}" ] || die "round $run: $line"
  echo "$line" | as_user tee -a "$TIMES" >/dev/null
  log "round $run of $RUNS: floors $(echo "$line" | cut -f1) and $(echo "$line" | cut -f"$((floor_at + 1))") ns per row"
done

# Per statement: the best round; that over its floor's best; the median of the rounds' ratios
# to their own floor; the best over its base's best, in ns a call (0 for a floor or a base).
stats=$(awk -F '\t' -v floors="${FLOORS[*]}" -v bases="${BASES[*]}" '
  BEGIN { split(floors, fl, " "); split(bases, ba, " ") }
  { for (i = 1; i <= NF; i++) t[NR, i] = $i; n = NF }
  END {
    for (i = 1; i <= n; i++) {
      best[i] = t[1, i]; for (k = 2; k <= NR; k++) if (t[k, i] < best[i]) best[i] = t[k, i]
    }
    for (i = 1; i <= n; i++) {
      f = fl[i] + 1; b = ba[i] + 1
      m = 0; for (k = 1; k <= NR; k++) v[++m] = t[k, i] / t[k, f]
      for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (v[y] < v[x]) { z = v[x]; v[x] = v[y]; v[y] = z }
      med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
      printf "%.1f\t%.2f\t%.2f\t%.1f\n", best[i], best[i] / best[f], med, best[i] - best[b]
    }
  }' "$TIMES")

version=$(q "SHOW server_version")
cpu=$(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
mkdir -p "$OUT"
{
  echo "# Masking, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "PostgreSQL $version; $(nproc) cores, $mem, ${cpu:-unknown CPU}, $(uname -sr)."
  echo "\`SELECT count(f) FROM …\`, $(printf "%'d" "$ROWS") rows, $RUNS rounds, every statement once a round"
  echo "in one session that has read the table once. ns per row is the best round; ns a call, that less"
  echo "the best of the plain reading above it (the floor, or \`count(column)\`); × floor, the best over"
  echo "the floor's best; the median, that of each round's ratio to its own floor."
  i=0
  while IFS=$'\t' read -r ns ratio median extra; do
    if [ "$i" = 0 ] || [ "$i" = "$floor_at" ]; then
      echo
      if [ "$i" = 0 ]; then
        echo "Over \`generate_series\` of $(printf "%'d" "$ROWS") bigint IDs from the table's first, \`count(1)\` the floor of bench/run.sh:"
      else
        echo "Over the table:"
      fi
      echo
      echo "| f | ns per row | ns a call | × floor | median × floor | what |"
      echo "|---|---:|---:|---:|---:|---|"
    fi
    [ "${BASES[$i]}" != "$i" ] || extra=–
    echo "| ${NAMES[$i]} | $ns | $extra | $ratio | $median | ${WHATS[$i]} |"
    i=$((i + 1))
  done <<<"$stats"
  echo
  shown=()
  for c in "${checks[@]}"; do shown+=("\`${c//"$K"/k}\`"); done
  echo "Checked on every row first: $(printf '%s; ' "${shown[@]}" | sed 's/; $//')."
  [ -z "$UUID47" ] || echo "(k: uuid47's form of the derived key.)"
  [ -n "$HASHIDS" ] || echo "pg_hashids is not installed here: its rows are left out."
  [ -n "$UUID47" ] || echo "uuid47 is not installed here: its rows are left out."
} | tee "$OUT/mask.md"
log "results in $OUT/mask.md"
