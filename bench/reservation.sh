#!/usr/bin/env bash
# The durable reservation's figures: how far new IDs are ahead of the clock right after each
# of 5 clean restarts, how many reservation writes a burst of 2,000,000 IDs of one shard
# takes (2 s of its IDs, made in well under that, at snowflake.max_lead = 10 s), and the
# worst single snowflake() call over 3 s (three ends of a 1 s reservation window). Builds and
# installs the extension, and runs a throwaway server (build/reservation-bench).
source "$(dirname "$0")/../scripts/common.sh"

install_packages bc
ensure_server_user
prepare_work
build_and_install

start_server "$WORK/reservation-bench" "${SNOWFLAKE_BENCH_PORT:-54349}" <<'CONF'
snowflake.max_lead = '10s'
snowflake.shard_id = 1
CONF
trap stop_server EXIT
q() { as_user "${PSQL[@]}" -At -c "$1"; }
q "SET client_min_messages = warning; DROP EXTENSION IF EXISTS snowflake; CREATE EXTENSION snowflake"

lead() {
  q "SELECT round(extract(epoch FROM snowflake_timestamp(snowflake()) - clock_timestamp()) * 1000)"
}
drift=()
for _ in 1 2 3 4 5; do
  q "SELECT count(snowflake()) FROM generate_series(1, 20000)" >/dev/null
  as_user "$PG_BIN/pg_ctl" -D "$SERVER_DATA" -l "$WORK/reservation-bench/server.log" -w restart >/dev/null
  drift+=("$(lead)")
done
echo "lead of new IDs over the clock after each of 5 clean restarts: ${drift[*]} ms"

before=$(q "SELECT max(reservation_writes) FROM snowflake_status()")
started=$(date +%s.%N)
q "SELECT count(snowflake(11)) FROM generate_series(1, 2000000)" >/dev/null
ended=$(date +%s.%N)
after=$(q "SELECT max(reservation_writes) FROM snowflake_status()")
printf 'reservation writes for 2,000,000 snowflake(11): %d in %.2f s\n' \
  "$((after - before))" "$(echo "$ended - $started" | bc)"

worst=$(as_user "${PSQL[@]}" -At -f - < "$ROOT/bench/worst_call.sql")
echo "worst single snowflake() call over 3 s: $worst ms"
