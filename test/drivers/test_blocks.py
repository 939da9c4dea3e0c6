"""ID blocks through psycopg 3, with the Python client package (clients/python) as pip
installed it: run by the virtual environment's python3 (test/drivers/run.sh). The package is the
installed one, of clients/python's version; its rule gives exactly snowflake_block_ids() for
blocks of 1 to 1,048,576 IDs; IdBlocks shared by 16 threads hands out no key twice; keys from
blocks inserted while other sessions insert DEFAULT snowflake() rows give no duplicate; and
the README's examples run. Blocks past 102,401 IDs are taken in sessions that raise
snowflake.block_max_lead (a superuser's setting) to 1,024 ms."""
import importlib.metadata
import os
import re
import sys
import threading
import tomllib
import unittest

import psycopg

import ids
import snowflake_block
from snowflake_block import LARGEST, IdBlocks, block_ids, take_from

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients",
                      "python")
THREADS = 16

SIZES = (1, 2, 1023, 1024, 1025, 3000, 65536, 1048576)
RAISE_LEAD = "SET snowflake.block_max_lead = '1024ms'"

# Pairs that are not a block's ends, which snowflake_block_ids() refuses: more than 1,048,576
# IDs, a negative ID, last below first, two shards.
MS = 1 << 30
BAD_PAIRS = ((MS << 23, (MS + 1024) << 23), (MS << 23 | 5, (MS + 1024) << 23 | 5),
             (-1, 5), (-(1 << 40), MS << 23), (MS << 23 | 1, MS << 23),
             (MS << 23 | 1 << 10, MS << 23 | 2 << 10))


def readme_python():
    """The ```python blocks of clients/python/README.md, in order."""
    with open(os.path.join(CLIENT, "README.md"), encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```$", f.read(), re.M | re.S)


class Blocks(unittest.TestCase):
    def setUp(self):
        self.conn = psycopg.connect("", autocommit=True)

    def tearDown(self):
        self.conn.close()

    def test_the_installed_package(self):
        """The module comes from the virtual environment's site-packages, not from the
        source folder, is the version clients/python/pyproject.toml declares, and holds
        this tree's code."""
        with open(os.path.join(CLIENT, "pyproject.toml"), "rb") as f:
            version = tomllib.load(f)["project"]["version"]
        self.assertEqual(importlib.metadata.version("snowflake-block"), version)
        self.assertNotEqual(sys.prefix, sys.base_prefix, "not run in a virtual environment")
        path = os.path.realpath(snowflake_block.__file__)
        self.assertTrue(path.startswith(os.path.realpath(sys.prefix) + os.sep), path)
        self.assertNotEqual(os.path.dirname(path), os.path.realpath(CLIENT))
        with open(path, encoding="utf-8") as installed, \
                open(os.path.join(CLIENT, "snowflake_block.py"), encoding="utf-8") as source:
            self.assertEqual(installed.read(), source.read(), "installed from another source")

    def test_readme_examples_run(self):
        blocks = readme_python()
        self.assertEqual(len(blocks), 2)
        scope = {}
        try:
            for code in blocks:
                exec(compile(code, "clients/python/README.md", "exec"), scope)
        finally:
            if "conn" in scope:
                scope["conn"].close()
        self.assertEqual(len(scope["line_ids"]), 3)

    def test_client_rule_equals_the_server(self):
        self.conn.execute(RAISE_LEAD)
        for n in SIZES:
            first, last, count = self.conn.execute(
                "SELECT first, last, count FROM snowflake_block(%s)", [n]).fetchone()
            self.assertEqual(count, n)
            self.assertEqual((first >> 10) & 0x1FFF, ids.SHARD)
            server = [r[0] for r in self.conn.execute(
                "SELECT snowflake_block_ids(%s, %s)", [first, last])]
            client = list(block_ids(first, last, count))
            self.assertEqual(len(client), n)
            self.assertEqual(client, server, f"a block of {n}")
        with self.assertRaises(ValueError):
            list(block_ids(last, first, 1))

    def test_client_refuses_what_the_server_refuses(self):
        ms = 1 << 30
        for first, last in BAD_PAIRS:
            with self.subTest(first=first, last=last):
                with self.assertRaises(psycopg.Error) as server:
                    self.conn.execute("SELECT count(*) FROM snowflake_block_ids(%s, %s)",
                                      [first, last])
                self.assertIn(server.exception.sqlstate, ("22023", "22003"))
                with self.assertRaises(ValueError):
                    next(block_ids(first, last, 1 << 20))
        # The largest block is still a block.
        self.assertEqual(
            sum(1 for _ in block_ids(ms << 23, (ms + 1023) << 23 | 1023, 1 << 20)), 1 << 20)

    def test_client_refuses_the_ends_of_two_blocks(self):
        a = self.conn.execute("SELECT first, last, count FROM snowflake_block(100)").fetchone()
        self.conn.execute("SELECT snowflake_block(5000)")
        b = self.conn.execute("SELECT first, last, count FROM snowflake_block(100)").fetchone()
        self.assertEqual(len(list(block_ids(*a))), 100)
        with self.assertRaises(ValueError):
            next(block_ids(a[0], b[1], a[2]))

    def test_one_allocator_for_many_threads(self):
        """One IdBlocks shared by 16 threads, its blocks through take_from: one block taken at
        a time, no key twice, every key in a block the server gave (snowflake_block_ids()),
        each thread's keys rising, nothing dropped but the last block's rest; an empty
        request and one of more than the largest block (250,000)."""
        conn = psycopg.connect("", autocommit=True)
        taken, state = [], {"taking": 0, "most": 0}
        count_lock = threading.Lock()
        take = take_from(conn)

        def counted(n):
            with count_lock:
                state["taking"] += 1
                state["most"] = max(state["most"], state["taking"])
            try:
                row = take(n)
                taken.append(row)
                return row
            finally:
                with count_lock:
                    state["taking"] -= 1

        keys = IdBlocks(counted, 1000)
        got, errors = [[] for _ in range(THREADS)], []
        start = threading.Barrier(THREADS)

        def work(i):
            try:
                start.wait()
                for k in range(300):
                    got[i].extend(keys.next_ids(k % 7) if k % 3 else [keys.next_id()])
            except Exception as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(keys.next_ids(0), [])
        huge = keys.next_ids(250000)
        self.assertEqual(len(huge), 250000)
        reserved = set()
        for first, last, _ in taken:
            reserved.update(r[0] for r in conn.execute(
                "SELECT snowflake_block_ids(%s, %s)", [first, last]))
        conn.close()
        each = sum(k % 7 if k % 3 else 1 for k in range(300))
        handed = [k for g in got for k in g] + huge
        self.assertEqual(len(handed), THREADS * each + 250000)
        self.assertEqual(len(handed), len(set(handed)), "a key handed out twice")
        self.assertEqual(set(handed) - reserved, set(), "keys outside the blocks")
        # Only the last block's rest is left over: nothing was dropped on the way.
        self.assertLess(len(reserved) - len(handed), LARGEST)
        for g in got + [huge]:
            self.assertEqual(g, sorted(g), "a thread's keys are not in order")
        self.assertEqual(state["most"], 1, "blocks taken at once")
        print(f"# {len(handed)} keys to {THREADS} threads and one request of 250,000 from "
              f"{len(taken)} blocks: 0 duplicates, 0 outside the blocks, "
              f"{len(reserved) - len(handed)} left in the last", file=sys.stderr)

    def test_errors(self):
        """A bad count and a row that is not the block asked for are ValueError; a failed
        take fails its call alone, and the next call is served."""
        conn = psycopg.connect("", autocommit=True)
        take = take_from(conn)
        keys = IdBlocks(take, 10)
        for bad in (-1, 1.5, "3"):
            with self.assertRaises(ValueError):
                keys.next_ids(bad)
        short = IdBlocks(lambda n: take(n - 1), 10)
        with self.assertRaisesRegex(ValueError, "9 IDs, not a block of 10"):
            short.next_id()
        fail = [True]

        def flaky(n):
            if fail[0]:
                raise RuntimeError("no block")
            return take(n)

        keys = IdBlocks(flaky, 10)
        with self.assertRaisesRegex(RuntimeError, "no block"):
            keys.next_id()
        fail[0] = False
        self.assertEqual(len(keys.next_ids(3)), 3)
        # Past the lead bound: the server's 22023, through take_from, as is.
        with self.assertRaises(psycopg.Error) as e:
            IdBlocks(take, LARGEST + 1, LARGEST + 1).next_id()
        self.assertEqual(e.exception.sqlstate, "22023")
        # Outside autocommit, take_from ends each block's transaction.
        plain = psycopg.connect("")
        try:
            self.assertEqual(len(IdBlocks(take_from(plain), 5).next_ids(5)), 5)
            self.assertEqual(plain.info.transaction_status, psycopg.pq.TransactionStatus.IDLE)
        finally:
            plain.close()
        conn.close()

    def test_keys_from_blocks_beside_default_rows(self):
        self.conn.execute("DROP TABLE IF EXISTS block_rows; CREATE TABLE block_rows "
                          "(id bigint PRIMARY KEY DEFAULT snowflake(), src text NOT NULL)")
        stop = threading.Event()
        errors = []

        def defaults():
            try:
                with psycopg.connect("", autocommit=True) as other:
                    while not stop.is_set():
                        other.execute("INSERT INTO block_rows (src) "
                                      "SELECT 'default' FROM generate_series(1, 500)")
            except Exception as e:  # reported by the main thread
                errors.append(e)

        workers = [threading.Thread(target=defaults) for _ in range(2)]
        for w in workers:
            w.start()
        try:
            # Blocks come through a second connection: this one is busy with the COPY.
            keys_conn = psycopg.connect("", autocommit=True)
            keys_conn.execute(RAISE_LEAD)
            take = lambda n: keys_conn.execute(
                "SELECT first, last, count FROM snowflake_block(%s)", [n]).fetchone()
            for size in SIZES:
                keys = IdBlocks(take, size, 1 << 20)
                with self.conn.cursor().copy("COPY block_rows (id, src) FROM STDIN") as copy:
                    for _ in range(min(2 * size + 7, 300000)):
                        copy.write_row((keys.next_id(), "block"))
            keys_conn.close()
        finally:
            stop.set()
            for w in workers:
                w.join()
        self.assertEqual(errors, [])
        rows, distinct, blocks, defaults_ = self.conn.execute(
            "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE src = 'block'), "
            "count(*) FILTER (WHERE src = 'default') FROM block_rows").fetchone()
        self.assertEqual(rows, distinct)
        self.assertEqual(blocks, sum(min(2 * s + 7, 300000) for s in SIZES))
        self.assertGreater(defaults_, 0)


if __name__ == "__main__":
    unittest.main()
