#!/usr/bin/env python3
"""ID blocks from a client (bench/blocks.sh runs it against a throwaway server): rows a second
inserting PARENTS parent rows and 3 children each, in batches of 1,000 parents, with keys
from blocks of 1,000 (snowflake_block, both tables by COPY), against DEFAULT snowflake() with
RETURNING and against bigserial with RETURNING (the keys the client learns, as an ORM needs
them: parents, then their children, by INSERT ... SELECT unnest(...) RETURNING id); and the
cost of a snowflake_block(1000) call against one snowflake() call, in the server and from the
client (a round trip each). Prints Markdown. Needs the Python client package (clients/python)
installed: bench/blocks.sh runs it with the virtual environment scripts/clients.sh makes."""
import argparse
import io
import threading
import time

import psycopg2
from snowflake_block import IdBlocks

BATCH = 1000  # parents per batch
CHILDREN = 3


def tables(cur, kind):
    key = {"snowflake": "bigint PRIMARY KEY DEFAULT snowflake()",
           "bigserial": "bigserial PRIMARY KEY"}[kind]
    cur.execute(f"""DROP TABLE IF EXISTS child, parent;
        CREATE TABLE parent (id {key}, name text NOT NULL);
        CREATE TABLE child (id {key}, parent_id bigint NOT NULL REFERENCES parent, n int NOT NULL);
        CHECKPOINT""")


def with_blocks(conn, parents):
    cur = conn.cursor()
    tables(cur, "snowflake")
    conn.commit()
    t0 = time.perf_counter()

    def take(n):
        cur.execute("SELECT first, last, count FROM snowflake_block(%s)", [n])
        return cur.fetchone()

    keys = IdBlocks(take, 1000)
    for done in range(0, parents, BATCH):
        ids = keys.next_ids(BATCH * (1 + CHILDREN))
        pids = ids[:BATCH]
        p = "".join(f"{pid}\tparent {done + i}\n" for i, pid in enumerate(pids))
        c = "".join(f"{cid}\t{pids[k // CHILDREN]}\t{k % CHILDREN}\n"
                    for k, cid in enumerate(ids[BATCH:]))
        cur.copy_expert("COPY parent (id, name) FROM STDIN", io.StringIO(p))
        cur.copy_expert("COPY child (id, parent_id, n) FROM STDIN", io.StringIO(c))
        conn.commit()
    return time.perf_counter() - t0


def with_returning(conn, parents, kind):
    cur = conn.cursor()
    tables(cur, kind)
    conn.commit()
    t0 = time.perf_counter()
    for done in range(0, parents, BATCH):
        cur.execute("INSERT INTO parent (name) SELECT unnest(%s::text[]) RETURNING id",
                    [[f"parent {i}" for i in range(done, done + BATCH)]])
        pids = [r[0] for r in cur.fetchall()]
        cur.execute("INSERT INTO child (parent_id, n) SELECT unnest(%s::bigint[]), "
                    "unnest(%s::int[]) RETURNING id",
                    [[p for p in pids for _ in range(CHILDREN)], list(range(CHILDREN)) * len(pids)])
        cur.fetchall()
        conn.commit()
    return time.perf_counter() - t0


def handout(conn, total):
    """Keys for 1,000,000 parents and 3,000,000 children handed out by one IdBlocks of blocks
    of 1,000 to 8 threads, each asking for a batch's 4,000 at a time (a Markdown row)."""
    cur = conn.cursor()
    blocks = [0]

    def take(n):
        blocks[0] += 1  # one block at a time: under the allocator's lock
        cur.execute("SELECT first, last, count FROM snowflake_block(%s)", [n])
        return cur.fetchone()

    keys = IdBlocks(take, 1000)
    handed = [0]
    turn = threading.Lock()

    def worker():
        while True:
            with turn:
                if handed[0] >= total:
                    return
                handed[0] += 4000
            keys.next_ids(4000)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - t0
    return (f"| Python `IdBlocks`, psycopg2, 8 threads | {handed[0]} | {took:.2f} | "
            f"{handed[0] / took:.0f} | {blocks[0]} |")


def best(runs, f):
    return min(f() for _ in range(runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parents", type=int, default=1000000)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--handout-only", type=int, metavar="KEYS",
                    help="only the Python allocator's row of the hand-out table, for KEYS keys")
    args = ap.parse_args()
    conn = psycopg2.connect("")
    cur = conn.cursor()
    cur.execute("SELECT current_setting('server_version'), extversion FROM pg_extension "
                "WHERE extname = 'snowflake'")
    server, ext = cur.fetchone()
    if args.handout_only:
        cur.execute("SELECT snowflake()")  # the first reservation: not part of the time
        conn.commit()
        print(handout(conn, args.handout_only))
        return
    # The first IDs wait for the server's first reservation: not part of any method's time.
    cur.execute("SELECT snowflake(), (SELECT first FROM snowflake_block(1000))")
    conn.commit()
    rows = args.parents * (1 + CHILDREN)
    print(f"PostgreSQL {server}, snowflake {ext}; {args.parents:,} parents and "
          f"{args.parents * CHILDREN:,} children, batches of {BATCH:,} parents, one run each\n")
    print("| keys | s | rows a second | × blocks |")
    print("|---|---:|---:|---:|")
    results = [("blocks of 1,000 (`snowflake_block`), COPY", with_blocks(conn, args.parents)),
               ("`DEFAULT snowflake()` with `RETURNING`",
                with_returning(conn, args.parents, "snowflake")),
               ("`bigserial` with `RETURNING`", with_returning(conn, args.parents, "bigserial"))]
    for name, s in results:
        print(f"| {name} | {s:.2f} | {rows / s:,.0f} | {s / results[0][1]:.2f} |")
    cur.execute("DROP TABLE child, parent")
    conn.commit()

    # In the server: calls in one statement, each referring to the row so that it runs again.
    n = args.calls
    conn.autocommit = True

    def settle():
        """Until the shard's IDs are back at the clock (not timed): a run that starts with the
        stream ahead, after the last, would measure the lead bound instead of the call."""
        for _ in range(1000):
            cur.execute("SELECT coalesce(max(lead_ms), 0) FROM snowflake_streams() "
                        "WHERE kind = 'snowflake'")
            if cur.fetchone()[0] <= 0:
                return
            time.sleep(0.01)

    def server(sql):
        def run():
            settle()
            t0 = time.perf_counter()
            cur.execute(sql)
            cur.fetchall()
            return time.perf_counter() - t0
        return best(args.runs, run) / n * 1e9

    floor = server(f"SELECT count(1) FROM generate_series(1, {n}) g")
    one = server(f"SELECT count(snowflake()) FROM generate_series(1, {n}) g")
    # Blocks of 1: the same IDs as the snowflake() calls, so that the call is measured, not the
    # shard's capacity (n blocks of 10 in one statement are 10 n IDs: past 102,400 they wait
    # for the clock at snowflake.block_max_lead).
    first = server(f"SELECT count(snowflake_block_first(1)) FROM generate_series(1, {n}) g")
    block = server(f"SELECT count((snowflake_block(1)).first) FROM generate_series(1, {n}) g")
    # The array form's cost per ID: n IDs in arrays of 1,000, against n snowflake() calls.
    arrays = max(n // 1000, 1)
    array = server(f"SELECT sum(cardinality(snowflake_block_array(1000))) "
                   f"FROM generate_series(1, {arrays}) g") * n / (arrays * 1000)
    # From the client: a round trip per call.
    trips = max(n // 20, 100)

    def client(sql):
        def run():
            settle()
            t0 = time.perf_counter()
            for _ in range(trips):
                cur.execute(sql)
                cur.fetchall()
            return time.perf_counter() - t0
        return best(args.runs, run) / trips * 1e6

    one_trip = client("SELECT snowflake()")
    first_trip = client("SELECT snowflake_block_first(10)")
    block_trip = client("SELECT first, last, count FROM snowflake_block(10)")
    array_trip = client("SELECT snowflake_block_array(10)")
    base = one - floor
    print(f"\n| call | in the server, ns a call (less the floor, {floor:.0f} ns) | × `snowflake()` | "
          f"from the client, µs a round trip | × `snowflake()` |")
    print("|---|---:|---:|---:|---:|")
    print(f"| `snowflake()` | {base:.0f} | 1.00 | {one_trip:.1f} | 1.00 |")
    for name, ns, trip in (
            ("`snowflake_block_first(1)`, `(10)` from the client", first - floor, first_trip),
            ("`(snowflake_block(1)).first`, `snowflake_block(10)` from the client",
             block - floor, block_trip)):
        print(f"| {name} | {ns:.0f} | {ns / base:.2f} | {trip:.1f} | {trip / one_trip:.2f} |")
    # (One row per 1,000 IDs: the floor's rows are not there to take off.)
    print(f"| `snowflake_block_array(1000)`, ns an ID (20 calls; no floor taken off); "
          f"`(10)` from the client | {array:.1f} | {array / base:.2f} | {array_trip:.1f} | "
          f"{array_trip / one_trip:.2f} |")

    # Sustained: blocks of 1,000 back to back, each a round trip, for 2 s of the shard's IDs
    # (or the run's share); the capacity rule allows 1,024,000 / 1,000 = 1,024 a second.
    calls = max(trips, 2048)
    times = []
    t0 = time.perf_counter()
    for _ in range(calls):
        t = time.perf_counter()
        cur.execute("SELECT first, last, count FROM snowflake_block(1000)")
        cur.fetchall()
        times.append(time.perf_counter() - t)
    took = time.perf_counter() - t0
    times.sort()
    print(f"\nSustained, {calls:,} calls of `snowflake_block(1000)` back to back: "
          f"{calls / took:,.0f} calls a second (the rule: at most 1,024), "
          f"p50 {times[len(times) // 2] * 1e6:,.0f} µs, p90 {times[len(times) * 9 // 10] * 1e6:,.0f} µs "
          f"a call ({times[len(times) // 2] * 1e6 / one_trip:.0f} × a `snowflake()` round trip).")


if __name__ == "__main__":
    main()
