#!/usr/bin/env python3
"""Benchmarks ID generation in one PostgreSQL server, side by side.

Generation: nanoseconds per ID for SELECT count(f) FROM generate_series(1, N), best of
--runs runs, with the runs of all generators interleaved so that they share the machine's
moods, and each generator's ratio to the executor's floor (f = 1).

Concurrency: --clients pgbench clients for --seconds on one shard, inserting snowflake() IDs
into an unlogged table; IDs per second against the layout's cap of 1,024,000 per second per
shard, and a duplicate count.

The connection comes from the usual PG* environment variables.
"""
import argparse
import os
import platform
import re
import subprocess
import tempfile
import time

import psycopg2

CAP_PER_SHARD = 1024 * 1000  # IDs per second: 1,024 sequence values per millisecond

SETUP = """
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE EXTENSION IF NOT EXISTS pgcrypto;
DROP SEQUENCE IF EXISTS bench_seq;
CREATE SEQUENCE bench_seq;
DROP SEQUENCE IF EXISTS insta_seq;
CREATE SEQUENCE insta_seq;
-- Instagram's published PL/pgSQL next_id()
CREATE OR REPLACE FUNCTION insta_next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
"""

# name, expression, note
GENERATORS = [
    ("floor", "1", "the executor alone"),
    ("snowflake()", "snowflake()", "this extension"),
    ("nextval('s')", "nextval('bench_seq')", "a sequence"),
    ("gen_random_uuid()", "gen_random_uuid()", "UUID v4"),
    ("next_id() PL/pgSQL", "insta_next_id()", "Instagram's function"),
]


def timed(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return time.perf_counter() - start


def generation(conn, rows, runs, generators):
    cur = conn.cursor()
    best = {name: float("inf") for name, _, _ in generators}
    for run in range(runs):
        for name, expr, _ in generators:
            # 1,000,000 IDs of one shard take about a second of its sequence space; a fresh
            # shard per run measures the cost of a call, not the layout's cap.
            cur.execute("SET snowflake.shard_id = %s", (run + 100,))
            seconds = timed(cur, f"SELECT count({expr}) FROM generate_series(1, {rows})")
            best[name] = min(best[name], seconds)
    cur.execute("RESET snowflake.shard_id")
    floor = best["floor"]
    table = []
    for name, _, note in generators:
        table.append((name, best[name] / rows * 1e9, best[name] / floor, note))
    return table


def pgbench(args, script):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        out = subprocess.run(["pgbench", "--no-vacuum", "-f", path] + args,
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return out


def concurrency(conn, clients, seconds, batch):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS bench_ids; CREATE UNLOGGED TABLE bench_ids (id bigint)")
    script = f"INSERT INTO bench_ids SELECT snowflake(4000) FROM generate_series(1, {batch});\n"
    jobs = str(min(clients, os.cpu_count() or 1))
    # Warm-up: use up the lead that an idle shard has in hand, so that the measured run
    # shows the steady state.
    pgbench(["-c", str(clients), "-j", jobs, "-T", "2"], script)
    cur.execute("TRUNCATE bench_ids")
    cur.execute("SELECT snowflake_timestamp(snowflake(4000))")
    out = pgbench(["-c", str(clients), "-j", jobs, "-T", str(seconds)], script)
    m = re.search(r"number of transactions actually processed: (\d+)", out)
    txns = int(m.group(1))
    cur.execute("SELECT count(*), count(*) - count(DISTINCT id) FROM bench_ids")
    ids, dups = cur.fetchone()
    assert ids == txns * batch, (ids, txns, batch)
    cur.execute("DROP TABLE bench_ids")
    rate = ids / seconds
    return ids, dups, rate


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu or platform.processor()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1000000, help="IDs per generation run")
    ap.add_argument("--runs", type=int, default=7, help="generation runs (best is kept)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=10, help="length of the concurrency run")
    ap.add_argument("--batch", type=int, default=10000, help="IDs per pgbench transaction")
    ap.add_argument("--quick", action="store_true",
                    help="a tiny run that only shows the benchmark still works")
    a = ap.parse_args()
    if a.quick:
        a.rows, a.runs, a.seconds, a.batch = 20000, 2, 1, 1000

    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(SETUP)
    cur.execute("SHOW server_version")
    version = cur.fetchone()[0]

    print(f"# snowflake benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"PostgreSQL {version}; {machine()}\n")

    print(f"## Generation: SELECT count(f) FROM generate_series(1, {a.rows:,}), "
          f"best of {a.runs}\n")
    print("| f | ns per ID | × floor | what |")
    print("|---|---:|---:|---|")
    for name, ns, ratio, note in generation(conn, a.rows, a.runs, GENERATORS):
        print(f"| {name} | {ns:.1f} | {ratio:.2f} | {note} |")

    print(f"\n## Concurrency: {a.clients} clients, {a.seconds} s, one shard, "
          f"{a.batch:,} IDs per INSERT into an unlogged table\n")
    ids, dups, rate = concurrency(conn, a.clients, a.seconds, a.batch)
    print("| IDs | IDs/s | % of the cap (1,024,000/s) | duplicates |")
    print("|---:|---:|---:|---:|")
    print(f"| {ids:,} | {rate:,.0f} | {100 * rate / CAP_PER_SHARD:.1f} | {dups} |")
    if dups:
        raise SystemExit("duplicate IDs found")


if __name__ == "__main__":
    main()
