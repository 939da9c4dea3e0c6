#!/usr/bin/env python3
"""Benchmarks every ID kind in one PostgreSQL server, side by side.

1. Generation: nanoseconds per ID for SELECT count(f) FROM generate_series(1, N), best of
   --runs runs with all generators interleaved (so that they share the machine's moods),
   and each one's ratio to the executor's floor (f = 1): best run over the floor's best, and
   the median of each run's ratio to the floor run just before it. The slowest run N/10 rows.
2. Text round trip: ulid values to text and back, beside the same for uuid.
3. Bulk insert as primary key: --insert-rows rows in batches of --insert-batch into a table
   whose key is bigserial, uuid v4, snowflake_uuidv7(), ulid(), sno(), rsxid(), ksuid() or
   snowflake() (and on PostgreSQL 18 and later core's uuidv7(), in every section); after every batch the
   elapsed time and the sizes of table and index, so that rate and size can be plotted
   against the row count. Each kind runs --insert-runs times (interleaved); the best
   (fastest) run is reported.
4. Concurrency: IDs per second with 1, 2, 4, 8 and 16 pgbench clients (--clients) for each
   generator, for --conc-seconds each; snowflake() both on one shard and with one shard per client.
   One shard's cap is 1,024,000 IDs per second.
5. Range query: "rows of the last hour" on --range-rows rows (one a second), by the
   primary key (id >= snowflake_at(...)) against an indexed timestamp column; the plans
   and the best of --runs timings.
6. The extension's shared memory.
7. With --core-costs: what one ID costs inside the core, outside the server: each ChaCha20
   kernel this CPU runs, each way of reading the clock, and each stream's step that takes
   the next value (bench/core_costs.cpp); and which clock reading IDs take on this machine.

Writes results.md, the data files and PNG plots (gnuplot) into --out, and prints the
Markdown. The connection comes from the usual PG* environment variables.
"""
import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import psycopg2

CAP_PER_SHARD = 1024 * 1000  # snowflake IDs per second per shard

SETUP = """
DROP EXTENSION IF EXISTS snowflake CASCADE;  -- a throwaway server: start from the built version
CREATE EXTENSION snowflake;
DROP SEQUENCE IF EXISTS bench_seq;
CREATE SEQUENCE bench_seq;
"""


# name, expression, note, share of --rows
GENERATORS = [
    ("floor", "1", "the executor alone", 1),
    ("clock_timestamp()", "clock_timestamp()", "a call that reads clock_gettime()", 1),
    ("snowflake()", "snowflake()", "this extension", 1),
    ("snowflake_uuidv7()", "snowflake_uuidv7()", "this extension", 1),
    ("ulid()", "ulid()", "this extension", 1),
    ("sno()", "sno()", "this extension", 1),
    ("rsxid()", "rsxid()", "this extension", 1),
    ("ksuid()", "ksuid()", "this extension", 1),
    ("nextval('s')", "nextval('bench_seq')", "a sequence", 1),
    ("gen_random_uuid()", "gen_random_uuid()", "UUID v4", 0.1),
    ("next_id() PL/pgSQL", "insta_next_id()", "Instagram's function", 0.1),
    # Causal order: observing an ID from elsewhere that is behind this server's clock (the
    # common case: it only reads the clock and the reservation).
    ("snowflake_observe(bigint)", "snowflake_observe(1099511627776::bigint)",
     "observing a snowflake ID older than the clock", 1),
    ("snowflake_observe(uuid)", "snowflake_observe('01890c10-2e3f-7000-8000-000000000101'::uuid)",
     "observing a UUIDv7 older than the clock", 1),
    # Decoding: our layout, and other systems' by name (IMMUTABLE, not folded: the ID varies).
    ("decode: ours", "(snowflake_decode(generate_series::bigint << 23)).ts",
     "snowflake_decode(id), this extension's layout", 1),
    ("decode: twitter", "(snowflake_decode(generate_series::bigint << 22, 'twitter')).ts",
     "snowflake_decode(id, 'twitter')", 1),
    ("decode: sonyflake", "(snowflake_decode(generate_series::bigint << 24, 'sonyflake')).ts",
     "snowflake_decode(id, 'sonyflake')", 1),
]

# name, column definition
INSERT_KINDS = [
    ("bigserial", "bigserial"),
    ("snowflake()", "bigint DEFAULT snowflake()"),
    ("snowflake_uuidv7()", "uuid DEFAULT snowflake_uuidv7()"),
    ("ulid()", "ulid DEFAULT ulid()"),
    ("sno()", "sno DEFAULT sno()"),
    ("rsxid()", "rsxid DEFAULT rsxid()"),
    ("ksuid()", "ksuid DEFAULT ksuid()"),
    ("uuid v4", "uuid DEFAULT gen_random_uuid()"),
]

# name, pgbench expression (:client_id is pgbench's client number)
CONC_KINDS = [
    ("snowflake(), one shard", "snowflake(4000)"),
    ("snowflake(), shard per client", "snowflake(5000 + :client_id)"),
    ("snowflake_uuidv7()", "snowflake_uuidv7()"),
    ("ulid()", "ulid()"),
    ("sno()", "sno()"),
    ("rsxid()", "rsxid()"),
    ("ksuid()", "ksuid()"),
    ("nextval()", "nextval('bench_seq')"),
    ("gen_random_uuid()", "gen_random_uuid()"),
]


def add_core_uuidv7():
    """PostgreSQL 18 and later have their own uuidv7(): measured beside ours."""
    def after(table, name, row):
        table.insert([r[0] for r in table].index(name) + 1, row)
    after(GENERATORS, "snowflake_uuidv7()",
          ("pg_catalog.uuidv7()", "pg_catalog.uuidv7()", "PostgreSQL's own, per backend", 1))
    after(INSERT_KINDS, "snowflake_uuidv7()", ("pg_catalog.uuidv7()", "uuid DEFAULT pg_catalog.uuidv7()"))
    after(CONC_KINDS, "snowflake_uuidv7()", ("pg_catalog.uuidv7()", "pg_catalog.uuidv7()"))


def timed(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    if cur.description is not None:
        cur.fetchall()
    return time.perf_counter() - start


def generation(cur, rows, runs):
    """[(name, best ns per ID, best / best floor, median of the runs' ratios, note)]."""
    times = {name: [] for name, _, _, _ in GENERATORS}
    for run in range(runs):
        for name, expr, _, share in GENERATORS:
            # 1,000,000 IDs of one shard take about a second of its sequence space; a fresh
            # shard per run measures the cost of a call, not the layout's cap.
            cur.execute("SET snowflake.shard_id = %s", (run + 100,))
            n = max(1, int(rows * share))
            seconds = timed(cur, f"SELECT count({expr}) FROM generate_series(1, {n})")
            times[name].append(seconds / n * 1e9)
    cur.execute("RESET snowflake.shard_id")
    floor = times["floor"]
    return [(name, min(times[name]), min(times[name]) / min(floor),
             statistics.median(t / f for t, f in zip(times[name], floor)), note)
            for name, _, note, _ in GENERATORS]


def text_round_trip(cur, rows, runs):
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


def bulk_insert(cur, rows, batch, runs):
    """For each kind, the fastest run's curve: [(rows, seconds, table bytes, index bytes)]."""
    best = {}
    for _ in range(runs):
        for name, column in INSERT_KINDS:
            cur.execute("DROP TABLE IF EXISTS bulk")
            # No autovacuum during the run: every kind is measured doing the same work.
            cur.execute(f"CREATE TABLE bulk (id {column} PRIMARY KEY, n int) "
                        "WITH (autovacuum_enabled = off)")
            cur.execute("CHECKPOINT")
            curve, elapsed, done = [], 0.0, 0
            while done < rows:
                n = min(batch, rows - done)
                elapsed += timed(cur, f"INSERT INTO bulk (n) SELECT g FROM generate_series(1, {n}) g")
                done += n
                cur.execute("SELECT pg_relation_size('bulk'), pg_relation_size('bulk_pkey')")
                table_bytes, index_bytes = cur.fetchone()
                curve.append((done, elapsed, table_bytes, index_bytes))
            if name not in best or elapsed < best[name][-1][1]:
                best[name] = curve
    cur.execute("DROP TABLE bulk")
    return best


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


def concurrency(clients_list, seconds, batch):
    """{kind: [(clients, IDs per second)]}"""
    result = {}
    for name, expr in CONC_KINDS:
        script = f"SELECT count({expr}) FROM generate_series(1, {batch});\n"
        # Warm-up: also uses up the lead that an idle shard has in hand, so that one shard
        # shows its steady state.
        pgbench(["-c", "2", "-j", "2", "-T", str(min(2, seconds))], script)
        points = []
        for clients in clients_list:
            jobs = str(min(clients, os.cpu_count() or 1))
            out = pgbench(["-c", str(clients), "-j", jobs, "-T", str(seconds)], script)
            txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
            points.append((clients, txns * batch / seconds))
        result[name] = points
    return result


def sustained_one_shard(cur, clients, seconds, batch):
    """8 clients inserting snowflake() IDs of one shard: rate after the lead is used up."""
    cur.execute("DROP TABLE IF EXISTS bench_ids; CREATE UNLOGGED TABLE bench_ids (id bigint)")
    script = f"INSERT INTO bench_ids SELECT snowflake(4001) FROM generate_series(1, {batch});\n"
    jobs = str(min(clients, os.cpu_count() or 1))
    pgbench(["-c", str(clients), "-j", jobs, "-T", "2"], script)  # use up the lead in hand
    cur.execute("TRUNCATE bench_ids")
    pgbench(["-c", str(clients), "-j", jobs, "-T", str(seconds)], script)
    cur.execute("SELECT count(*), count(*) - count(DISTINCT id) FROM bench_ids")
    ids, dups = cur.fetchone()
    cur.execute("DROP TABLE bench_ids")
    return ids, dups, ids / seconds


def range_query(cur, rows, runs):
    cur.execute("DROP TABLE IF EXISTS ranged")
    cur.execute("CREATE TABLE ranged (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, n int)")
    # One row a second up to now, oldest first (as rows arrive), its ID made for its time
    # (shard 1).
    cur.execute(f"""
        INSERT INTO ranged
        SELECT snowflake_at(t) | (1 << 10), t, g
          FROM generate_series({rows}, 1, -1) g,
               LATERAL (SELECT now() - g * interval '1 second' AS t) s""")
    cur.execute("CREATE INDEX ranged_created_at ON ranged (created_at)")
    cur.execute("VACUUM ANALYZE ranged")
    queries = {
        "primary key": "SELECT count(*), max(n) FROM ranged WHERE id >= snowflake_at(now() - interval '1 hour')",
        "timestamp index": "SELECT count(*), max(n) FROM ranged WHERE created_at >= now() - interval '1 hour'",
    }
    result = {}
    for name, sql in queries.items():
        cur.execute("EXPLAIN (COSTS OFF) " + sql)
        plan = "\n".join(r[0] for r in cur.fetchall())
        cur.execute(sql)
        count = cur.fetchone()[0]
        best = min(timed(cur, sql) for _ in range(runs))
        result[name] = (plan, count, best)
    cur.execute("SELECT pg_relation_size('ranged'), pg_relation_size('ranged_pkey'), "
                "pg_relation_size('ranged_created_at')")
    sizes = cur.fetchone()
    cur.execute("DROP TABLE ranged")
    return result, sizes


def shared_memory(cur):
    cur.execute("SELECT size, allocated_size FROM pg_shmem_allocations WHERE name = 'snowflake'")
    return cur.fetchone()


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
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores{mem}, {cpu or platform.processor()}, {platform.system()} {platform.release()}"


def mib(b):
    return b / 2**20


def plot(out, insert, conc):
    """Writes the data files and, if gnuplot is there, the PNG plots; returns their names."""
    names = list(insert)
    with open(os.path.join(out, "insert.dat"), "w") as f:
        f.write("# rows, then per kind: seconds, rows/s over the last batch, index MiB\n")
        f.write("# kinds: " + " | ".join(names) + "\n")
        for i in range(len(insert[names[0]])):
            row = [insert[names[0]][i][0]]
            for name in names:
                done, elapsed, _, index_bytes = insert[name][i]
                prev_done, prev_elapsed = (insert[name][i - 1][:2] if i else (0, 0.0))
                row += [f"{elapsed:.3f}", f"{(done - prev_done) / (elapsed - prev_elapsed):.0f}",
                        f"{mib(index_bytes):.2f}"]
            f.write(" ".join(str(x) for x in row) + "\n")
    cnames = list(conc)
    with open(os.path.join(out, "concurrency.dat"), "w") as f:
        f.write("# clients, then IDs/s per kind: " + " | ".join(cnames) + "\n")
        for i, (clients, _) in enumerate(conc[cnames[0]]):
            f.write(" ".join([str(clients)] + [f"{conc[n][i][1]:.0f}" for n in cnames]) + "\n")
    if shutil.which("gnuplot") is None:
        return []
    common = ('set terminal pngcairo size 1000,560 font "DejaVu Sans,11" noenhanced\n'
              'set grid\nset key outside right top\n')
    index_lines = ", ".join(
        f"'insert.dat' using ($1/1e6):{2 + 3 * i + 2} with linespoints title '{n}'"
        for i, n in enumerate(names))
    rate_lines = ", ".join(
        f"'insert.dat' using ($1/1e6):(${2 + 3 * i + 1}/1000) with linespoints title '{n}'"
        for i, n in enumerate(names))
    conc_lines = ", ".join(
        f"'concurrency.dat' using 1:(${2 + i}/1e6) with linespoints title '{n}'"
        for i, n in enumerate(cnames))
    scripts = {
        "index_size.png": common + "set output 'index_size.png'\n"
        "set title 'Primary-key index size during a bulk insert'\n"
        "set xlabel 'rows (millions)'\nset ylabel 'index size (MiB)'\n"
        f"plot {index_lines}\n",
        "insert_rate.png": common + "set output 'insert_rate.png'\n"
        "set title 'Insert rate as the table grows (each point: the last batch)'\n"
        "set xlabel 'rows (millions)'\nset ylabel 'thousand rows per second'\nset yrange [0:*]\n"
        f"plot {rate_lines}\n",
        "concurrency.png": common + "set output 'concurrency.png'\n"
        "set title 'IDs per second by number of clients'\nset logscale x 2\n"
        "set xlabel 'pgbench clients'\nset ylabel 'million IDs per second'\nset yrange [0:*]\n"
        f"plot {conc_lines}\n",
    }
    for name, script in scripts.items():
        subprocess.run(["gnuplot"], input=script, text=True, cwd=out, check=True)
    return list(scripts)


def client_counts(text):
    """--clients: "1,2,4" as [1, 2, 4]."""
    try:
        counts = [int(c) for c in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"not a list of client counts: {text!r}")
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench/results", help="folder for results.md and plots")
    ap.add_argument("--rows", type=int, default=1000000, help="IDs per generation run")
    ap.add_argument("--runs", type=int, default=25, help="generation and query runs (best kept)")
    ap.add_argument("--text-rows", type=int, default=1000000, help="values in the text round trip")
    ap.add_argument("--insert-rows", type=int, default=10000000, help="rows per bulk insert")
    ap.add_argument("--insert-batch", type=int, default=1000000, help="rows per INSERT")
    ap.add_argument("--insert-runs", type=int, default=2, help="bulk insert runs (best kept)")
    ap.add_argument("--conc-seconds", type=int, default=5, help="seconds per concurrency point")
    ap.add_argument("--clients", default="1,2,4,8,16", type=client_counts,
                    help="pgbench client counts of the concurrency section, comma-separated")
    ap.add_argument("--batch", type=int, default=10000, help="IDs per pgbench transaction")
    ap.add_argument("--sustain-seconds", type=int, default=10,
                    help="length of the one-shard sustained run (8 clients)")
    ap.add_argument("--range-rows", type=int, default=10000000, help="rows for the range query")
    ap.add_argument("--core-costs", help="the core's micro-benchmark to run (bench/core_costs)")
    ap.add_argument("--sections", default="1,2,3,4,5,6,7",
                    help="the sections to run, as numbers: 1 for generation alone")
    ap.add_argument("--quick", action="store_true",
                    help="a tiny run that only shows the benchmark still works")
    a = ap.parse_args()
    if a.quick:
        a.rows, a.runs, a.text_rows = 20000, 2, 20000
        a.insert_rows, a.insert_batch, a.insert_runs = 20000, 10000, 1
        a.conc_seconds, a.batch, a.sustain_seconds, a.range_rows = 1, 1000, 1, 20000
        a.clients = [1, 4]
    sections = {int(n) for n in a.sections.split(",")}
    os.makedirs(a.out, exist_ok=True)

    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(SETUP)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                           "instagram_next_id.sql")) as f:
        cur.execute(f.read())
    cur.execute("SHOW server_version")
    version = cur.fetchone()[0]
    cur.execute("SHOW server_version_num")
    if int(cur.fetchone()[0]) >= 180000:
        add_core_uuidv7()
    started = time.time()

    md = []
    md.append(f"# snowflake benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    md.append(f"PostgreSQL {version}; {machine()}.\n")

    insert = conc = None
    dups = 0
    if 1 in sections:
        md.append(f"## 1. Generation: `SELECT count(f) FROM generate_series(1, {a.rows:,})`\n")
        md.append(f"{a.runs} runs, all generators interleaved; the last two run a tenth of the rows. "
                  "ns per ID is the best run; × floor is the best run over the floor's best run; "
                  "the median is that of each run's ratio to the floor measured just before it.\n")
        md.append("| f | ns per ID | × floor | median × floor | what |\n|---|---:|---:|---:|---|")
        gen = generation(cur, a.rows, a.runs)
        for name, ns, ratio, median, note in gen:
            md.append(f"| {name} | {ns:.1f} | {ratio:.2f} | {median:.2f} | {note} |")
        by_name = {g[0]: g for g in gen}
        ours = by_name["decode: ours"]
        md.append("\nDecoding other systems' IDs, as a ratio to decoding our own (median of the "
                  "runs' floor ratios over ours): " + ", ".join(
                      f"{n[len('decode: '):]} {by_name[n][3] / ours[3]:.2f}"
                      for n in by_name if n.startswith("decode: ") and n != "decode: ours") + ".\n")
        # For bench/versions.sh, which sets the majors side by side.
        with open(os.path.join(a.out, "generation.tsv"), "w") as f:
            f.write(f"# PostgreSQL {version}\n")
            f.writelines(f"{name}\t{ns:.1f}\t{ratio:.2f}\t{median:.2f}\n"
                         for name, ns, ratio, median, _ in gen)

    if 2 in sections:
        rt = text_round_trip(cur, a.text_rows, a.runs)
        md.append(f"\n## 2. Text round trip: {a.text_rows:,} values to text and back\n")
        md.append(f"Best of {a.runs} runs.\n")
        md.append("| type | ms | ns per value | × uuid |\n|---|---:|---:|---:|")
        for kind in ("ulid", "uuid"):
            md.append(f"| {kind} | {rt[kind] * 1e3:.1f} | {rt[kind] / a.text_rows * 1e9:.1f} | "
                      f"{rt[kind] / rt['uuid']:.2f} |")

    if 3 in sections:
        insert = bulk_insert(cur, a.insert_rows, a.insert_batch, a.insert_runs)
        md.append(f"\n## 3. Bulk insert as primary key, {a.insert_rows:,} rows\n")
        md.append(f"`INSERT … SELECT` in batches of {a.insert_batch:,} rows into one table; the "
                  f"fastest of {a.insert_runs} runs per kind, read after the first batch, the "
                  "second and the last.\n")
        md.append("| key | rows | seconds | rows/s | time × uuid v4 | index MiB | table MiB |\n"
                  "|---|---:|---:|---:|---:|---:|---:|")
        points = len(insert["uuid v4"])
        for i in sorted({0, min(1, points - 1), points - 1}):
            ref_secs = insert["uuid v4"][i][1]
            for name in insert:
                done, secs, table_bytes, index_bytes = insert[name][i]
                md.append(f"| {name} | {done:,} | {secs:.2f} | {done / secs:,.0f} | "
                          f"{secs / ref_secs:.2f} | {mib(index_bytes):.1f} | {mib(table_bytes):.1f} |")

    if 4 in sections:
        conc = concurrency(a.clients, a.conc_seconds, a.batch)
        md.append(f"\n## 4. Concurrency: IDs per second\n")
        md.append(f"pgbench, `SELECT count(f) FROM generate_series(1, {a.batch:,})` per transaction, "
                  f"{a.conc_seconds} s per point. One shard of snowflake() is capped at 1,024,000 "
                  "IDs/s by its layout.\n")
        md.append("| f \\ clients | " + " | ".join(str(c) for c in a.clients) + " |\n|---|"
                  + "---:|" * len(a.clients))
        for name, points in conc.items():
            md.append(f"| {name} | " + " | ".join(f"{r:,.0f}" for _, r in points) + " |")
        ids, dups, rate = sustained_one_shard(cur, 8, a.sustain_seconds, a.batch)
        md.append(f"\nSustained, one shard, 8 clients inserting into an unlogged table for "
                  f"{a.sustain_seconds} s after the lead in hand is used up: {ids:,} IDs, "
                  f"{rate:,.0f} IDs/s, {100 * rate / CAP_PER_SHARD:.1f} % of the cap, {dups} "
                  "duplicates.")

    if 5 in sections:
        rq, (table_bytes, pkey_bytes, ts_bytes) = range_query(cur, a.range_rows, a.runs)
        md.append(f"\n## 5. Rows of the last hour, of {a.range_rows:,} (one a second)\n")
        md.append(f"Best of {a.runs} runs; the rows end when the table was filled, so the count is "
                  "a little under 3,600. The timestamp column needs an index of its own "
                  f"({mib(ts_bytes):.1f} MiB); the primary key ({mib(pkey_bytes):.1f} MiB) is "
                  f"there anyway. Table: {mib(table_bytes):.1f} MiB.\n")
        md.append("| by | rows | ms |\n|---|---:|---:|")
        for name, (plan, count, secs) in rq.items():
            md.append(f"| {name} | {count:,} | {secs * 1e3:.2f} |")
        for name, (plan, _, _) in rq.items():
            md.append(f"\n{name}:\n```\n{plan}\n```")

    if 6 in sections:
        size, allocated = shared_memory(cur)
        md.append(f"\n## 6. Shared memory\n\nThe extension's segment (`pg_shmem_allocations`): "
                  f"{size:,} bytes ({allocated:,} allocated): one cache line per shard for 8,192 "
                  "shards, the clock, and the UUIDv7 and ULID streams.")

    if 7 in sections and a.core_costs:
        tables = subprocess.run([a.core_costs], check=True, capture_output=True,
                                text=True).stdout
        md.append("\n## 7. Inside one ID: random bits, the clock, the next value\n\nOutside "
                  "the server, best of 15 interleaved runs: each ChaCha20 kernel this CPU runs "
                  "(batches of 8 blocks; snowflake_uuidv7() draws 8 bytes per UUID), each way "
                  "of reading the monotonic clock (every ID reads it once), and the step that "
                  "takes a stream's next value (one per ID); then which clock IDs read on this "
                  "machine.\n")
        md.append(tables.rstrip("\n"))

    pngs = plot(a.out, insert, conc) if insert and conc else []
    if pngs:
        md.append("\n## Plots\n")
        md.extend(f"![{p}]({p})" for p in pngs)
    md.append(f"\nThe whole run took {time.time() - started:.0f} s.")

    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    if dups:
        raise SystemExit("duplicate IDs found")


if __name__ == "__main__":
    main()
