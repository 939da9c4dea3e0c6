"""ID blocks through psycopg 3: the Python rule (snowflake_block.py, as docs/applications.md
shows it) gives exactly snowflake_block_ids() for blocks of 1 to 1,048,576 IDs, IdBlocks shared
by threads hands out no key twice, and keys from blocks inserted while other sessions insert
DEFAULT snowflake() rows give no duplicate. Blocks past 102,401 IDs are taken in sessions
that raise snowflake.block_max_lead (a superuser's setting) to 1,024 ms."""
import inspect
import os
import re
import threading
import unittest

import psycopg

import ids
import snowflake_block
from snowflake_block import IdBlocks, block_ids

SIZES = (1, 2, 1023, 1024, 1025, 3000, 65536, 1048576)
RAISE_LEAD = "SET snowflake.block_max_lead = '1024ms'"

# Pairs that are not a block's ends, which snowflake_block_ids() refuses: more than 1,048,576
# IDs, a negative ID, last below first, two shards.
MS = 1 << 30
BAD_PAIRS = ((MS << 23, (MS + 1024) << 23), (MS << 23 | 5, (MS + 1024) << 23 | 5),
             (-1, 5), (-(1 << 40), MS << 23), (MS << 23 | 1, MS << 23),
             (MS << 23 | 1 << 10, MS << 23 | 2 << 10))


def documented_python():
    """The ```python block of docs/applications.md's "ID blocks" section."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                        "applications.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## ID blocks\n"):]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    return re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)


class Blocks(unittest.TestCase):
    def setUp(self):
        self.conn = psycopg.connect("", autocommit=True)

    def tearDown(self):
        self.conn.close()

    def test_documented_rule_is_the_module(self):
        doc = documented_python()
        for fn in (block_ids, IdBlocks):
            self.assertIn(inspect.getsource(fn), doc)

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
        """IdBlocks shared by 8 threads: no key twice, every key in a block the server gave,
        nothing dropped but the last block's rest, and empty and huge requests (blocks of
        at most 102,401, the default lead bound's)."""
        conn = psycopg.connect("", autocommit=True)
        taken, conn_lock = [], threading.Lock()

        def take(n):
            with conn_lock:
                row = conn.execute("SELECT first, last, count FROM snowflake_block(%s)",
                                   [n]).fetchone()
            taken.append(row)
            return row

        keys = IdBlocks(take, 1000)
        got, errors = [[] for _ in range(8)], []

        def work(i):
            try:
                for k in range(300):
                    got[i].extend(keys.next_ids(k % 7) if k % 3 else [keys.next_id()])
            except Exception as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(keys.next_ids(0), [])
        huge = keys.next_ids(1500000)
        conn.close()
        handed = [k for g in got for k in g] + huge
        self.assertEqual(len(handed), len(set(handed)))
        reserved = [k for t in taken for k in block_ids(*t)]
        self.assertTrue(set(handed) <= set(reserved))
        # Only the last block's rest is left over: nothing was dropped on the way.
        self.assertLess(len(reserved) - len(handed), 102401)
        for g in got:
            self.assertEqual(g, sorted(g))

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
