#!/usr/bin/env python3
"""Benchmarks ID generation in one PostgreSQL server, side by side.

Generation: nanoseconds per ID for SELECT count(f) FROM generate_series(1, N), best of
--runs runs, with the runs of all generators interleaved so that they share the machine's
moods, and each generator's ratio to the executor's floor (f = 1). The slowest generators
run N/10 rows.

Text round trip: 1,000,000 ulid values to text and back, beside the same for uuid.

Bulk insert: --insert-rows rows into a table whose primary key defaults to ulid(),
uuidv7() or gen_random_uuid(), best of --insert-runs, with the sizes of table and index.

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
DROP EXTENSION IF EXISTS snowflake CASCADE;  -- a throwaway server: start from the built version
CREATE EXTENSION snowflake;
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

# name, expression, note, share of --rows (the slow ones run fewer rows: ns per ID is
# what is compared)
GENERATORS = [
    ("floor", "1", "the executor alone", 1),
    ("snowflake()", "snowflake()", "this extension", 1),
    ("uuidv7()", "uuidv7()", "this extension", 1),
    ("ulid()", "ulid()", "this extension", 1),
    ("nextval('s')", "nextval('bench_seq')", "a sequence", 1),
    ("gen_random_uuid()", "gen_random_uuid()", "UUID v4", 0.1),
    ("next_id() PL/pgSQL", "insta_next_id()", "Instagram's function", 0.1),
]


def timed(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return time.perf_counter() - start


def generation(conn, rows, runs, generators):
    cur = conn.cursor()
    best = {name: float("inf") for name, _, _, _ in generators}
    for run in range(runs):
        for name, expr, _, share in generators:
            # 1,000,000 IDs of one shard take about a second of its sequence space; a fresh
            # shard per run measures the cost of a call, not the layout's cap.
            cur.execute("SET snowflake.shard_id = %s", (run + 100,))
            n = max(1, int(rows * share))
            seconds = timed(cur, f"SELECT count({expr}) FROM generate_series(1, {n})")
            best[name] = min(best[name], seconds / n * 1e9)
    cur.execute("RESET snowflake.shard_id")
    floor = best["floor"]
    return [(name, best[name], best[name] / floor, note) for name, _, note, _ in generators]


def text_round_trip(conn, rows, runs):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS rt_ulid, rt_uuid")
    cur.execute(f"CREATE TABLE rt_ulid AS SELECT ulid() AS x FROM generate_series(1, {rows})")
    cur.execute(f"CREATE TABLE rt_uuid AS SELECT gen_random_uuid() AS x FROM generate_series(1, {rows})")
    cur.execute("VACUUM ANALYZE rt_ulid, rt_uuid")
    best = {"ulid": float("inf"), "uuid": float("inf")}
    for _ in range(runs):
        for kind in best:
            best[kind] = min(best[kind], timed(cur, f"SELECT count(x::text::{kind}) FROM rt_{kind}"))
    cur.execute("DROP TABLE rt_ulid, rt_uuid")
    return best


def bulk_insert(conn, rows, runs):
    cur = conn.cursor()
    kinds = [("ulid()", "ulid", "ulid()"), ("uuidv7()", "uuid", "uuidv7()"),
             ("gen_random_uuid()", "uuid", "gen_random_uuid()")]
    best = {}
    sizes = {}
    for _ in range(runs):
        for name, typ, default in kinds:
            cur.execute("DROP TABLE IF EXISTS bulk")
            cur.execute(f"CREATE TABLE bulk (id {typ} PRIMARY KEY DEFAULT {default}, n int)")
            cur.execute("CHECKPOINT")
            seconds = timed_exec(cur, f"INSERT INTO bulk (n) SELECT g FROM generate_series(1, {rows}) g")
            best[name] = min(best.get(name, float("inf")), seconds)
            cur.execute("SELECT pg_relation_size('bulk'), pg_relation_size('bulk_pkey')")
            sizes[name] = cur.fetchone()
    cur.execute("DROP TABLE bulk")
    return [(name, best[name], best[name] / best["gen_random_uuid()"], *sizes[name])
            for name, _, _ in kinds]


def timed_exec(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    return time.perf_counter() - start


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
    ap.add_argument("--runs", type=int, default=15, help="generation runs (best is kept)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=10, help="length of the concurrency run")
    ap.add_argument("--batch", type=int, default=10000, help="IDs per pgbench transaction")
    ap.add_argument("--text-rows", type=int, default=1000000, help="values in the text round trip")
    ap.add_argument("--insert-rows", type=int, default=2000000, help="rows per bulk insert")
    ap.add_argument("--insert-runs", type=int, default=3, help="bulk insert runs (best is kept)")
    ap.add_argument("--sections", default="generation,text,insert,concurrency",
                    help="comma-separated sections to run")
    ap.add_argument("--quick", action="store_true",
                    help="a tiny run that only shows the benchmark still works")
    a = ap.parse_args()
    if a.quick:
        a.rows, a.runs, a.seconds, a.batch = 20000, 2, 1, 1000
        a.text_rows, a.insert_rows, a.insert_runs = 20000, 20000, 1

    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(SETUP)
    cur.execute("SHOW server_version")
    version = cur.fetchone()[0]

    print(f"# snowflake benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"PostgreSQL {version}; {machine()}\n")

    sections = set(a.sections.split(","))
    if "generation" in sections:
        print_generation(conn, a)
    if "text" in sections:
        print_text(conn, a)
    if "insert" in sections:
        print_insert(conn, a)
    if "concurrency" in sections:
        print_concurrency(conn, a)


def print_generation(conn, a):
    print(f"## Generation: SELECT count(f) FROM generate_series(1, {a.rows:,}), "
          f"best of {a.runs}, runs interleaved\n")
    print("| f | ns per ID | × floor | what |")
    print("|---|---:|---:|---|")
    for name, ns, ratio, note in generation(conn, a.rows, a.runs, GENERATORS):
        print(f"| {name} | {ns:.1f} | {ratio:.2f} | {note} |")


def print_text(conn, a):
    print(f"\n## Text round trip: {a.text_rows:,} values to text and back, best of {a.runs}\n")
    rt = text_round_trip(conn, a.text_rows, a.runs)
    print("| type | ms | ns per value | × uuid |")
    print("|---|---:|---:|---:|")
    for kind in ("ulid", "uuid"):
        print(f"| {kind} | {rt[kind] * 1e3:.1f} | {rt[kind] / a.text_rows * 1e9:.1f} | "
              f"{rt[kind] / rt['uuid']:.2f} |")


def print_insert(conn, a):
    print(f"\n## Bulk insert: {a.insert_rows:,} rows, primary key by DEFAULT, "
          f"best of {a.insert_runs}\n")
    print("| DEFAULT | seconds | rows/s | × gen_random_uuid() | table MiB | index MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, seconds, ratio, table_bytes, index_bytes in bulk_insert(conn, a.insert_rows,
                                                                       a.insert_runs):
        print(f"| {name} | {seconds:.2f} | {a.insert_rows / seconds:,.0f} | {ratio:.2f} | "
              f"{table_bytes / 2**20:.1f} | {index_bytes / 2**20:.1f} |")


def print_concurrency(conn, a):
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
