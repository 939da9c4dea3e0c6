"""What the Python driver tests share: the fixture, the server's reference rows, and the
checks every kind must pass whatever type the driver hands it as."""
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = open(os.path.join(HERE, "fixture.sql"), encoding="utf-8").read()
REFERENCE = """SELECT k, sf_text, u_text, l_text, l_hex, sf_ms, sf_shard, sf_seq, u_ms, l_ms,
  epoch_ms FROM reference ORDER BY k"""
ROWS = 200
SHARD = int(os.environ["SNOWFLAKE_TEST_SHARD"])

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid_int(text):
    """The 128-bit value of a ULID's text: 26 Crockford base32 digits."""
    assert len(text) == 26, text
    n = 0
    for c in text:
        n = n * 32 + CROCKFORD.index(c)
    assert n < 1 << 128, text
    return n


def ulid_text(n):
    return "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in range(25, -1, -1))


def reference(cur):
    """The server's own view of the rows, in k order, as a list of dicts."""
    cur.execute(REFERENCE)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def check_rows(tc, rows, ref, ulid_value):
    """rows: (k, sf, u, l) as the driver returned them, in k order; ulid_value turns the
    driver's ulid (text or bytes) into its 128-bit integer."""
    tc.assertEqual(len(rows), ROWS)
    tc.assertEqual(len(ref), ROWS)
    for (k, sf, u, l), r in zip(rows, ref):
        tc.assertEqual(k, r["k"])
        # bigint: a Python int, exact (above 2^53, where a double would round)
        tc.assertIs(type(sf), int)
        tc.assertGreater(sf, 2**53)
        tc.assertEqual(str(sf), r["sf_text"])
        tc.assertEqual((sf >> 23) + r["epoch_ms"], r["sf_ms"])
        tc.assertEqual((sf >> 10) & 0x1FFF, r["sf_shard"])
        tc.assertEqual(sf & 0x3FF, r["sf_seq"])
        tc.assertEqual(r["sf_shard"], SHARD)
        # uuid: 48 bits of Unix milliseconds on top, version 7
        uu = u if isinstance(u, uuid.UUID) else uuid.UUID(u)
        tc.assertEqual(str(uu), r["u_text"])
        tc.assertEqual(uu.version, 7)
        tc.assertEqual(uu.int >> 80, r["u_ms"])
        # ulid: the same 128 bits as the server's, 48 bits of Unix milliseconds on top
        n = ulid_value(l)
        tc.assertEqual(ulid_text(n), r["l_text"])
        tc.assertEqual(n.to_bytes(16, "big").hex(), r["l_hex"])
        tc.assertEqual(n >> 80, r["l_ms"])
    # Order: issue order (k) is the order of each kind's values as the driver holds them.
    for col, key in ((1, lambda v: v), (2, lambda v: str(v)), (3, ulid_value)):
        values = [key(row[col]) for row in rows]
        tc.assertEqual(values, sorted(values))
        tc.assertEqual(len(set(values)), ROWS)
    # and a ulid's text and bytes sort as its value
    ulids = [ulid_value(row[3]) for row in rows]
    for form in ([ulid_text(n) for n in ulids], [n.to_bytes(16, "big") for n in ulids]):
        tc.assertEqual(form, sorted(form))


def check_back(tc, cur):
    """The values written back by the driver equal the server's, row for row."""
    cur.execute("""SELECT count(*) FROM ids JOIN back USING (k)
                    WHERE ids.sf = back.sf AND ids.u = back.u AND ids.l = back.l""")
    tc.assertEqual(cur.fetchone()[0], ROWS)
    # and sorting by each column on the server gives issue order
    for col in ("sf", "u", "l"):
        cur.execute(f"SELECT array_agg(k ORDER BY {col}) = array_agg(k ORDER BY k) FROM back")
        tc.assertIs(cur.fetchone()[0], True, col)


LOOKUP_ROWS = 2000


def check_ulid_lookups(tc, cur, lists):
    """A table (id ulid PRIMARY KEY, n int) looked up through cur by uuid.UUID parameters, which
    the driver sends as uuid (so the ulid = uuid operator compares them): every 97th row by
    WHERE id = %s, then three rows by each (condition, make) of lists, make turning a list of
    UUIDs into the parameter. Each returns its rows, and EXPLAIN of the same statement with the
    same parameter (enable_seqscan off) compares with a uuid on the primary key's index."""
    cur.execute("SET enable_seqscan = off")
    cur.execute("CREATE TEMP TABLE ulid_lookup (id ulid PRIMARY KEY, n int NOT NULL)")
    cur.execute("INSERT INTO ulid_lookup SELECT ulid(), g FROM generate_series(1, %s) g",
                [LOOKUP_ROWS])
    cur.execute("ANALYZE ulid_lookup")
    cur.execute("SELECT id::uuid::text FROM ulid_lookup ORDER BY n")
    keys = [uuid.UUID(r[0]) for r in cur.fetchall()]
    tc.assertEqual(len(keys), LOOKUP_ROWS)

    def uses_pkey(query, param):
        cur.execute("EXPLAIN " + query, [param])
        plan = "\n".join(r[0] for r in cur.fetchall())
        tc.assertIn("ulid_lookup_pkey", plan, f"{query}: the primary key's index\n{plan}")
        tc.assertIn("::uuid", plan, f"{query}: compared with a uuid\n{plan}")

    query = "SELECT n FROM ulid_lookup WHERE id = %s"
    for n in range(1, LOOKUP_ROWS + 1, 97):
        cur.execute(query, [keys[n - 1]])
        tc.assertEqual(cur.fetchall(), [(n,)], f"{query}, row {n}")
    uses_pkey(query, keys[0])
    some = [keys[4], keys[400], keys[LOOKUP_ROWS - 1]]
    for where, make in lists:
        query = f"SELECT n FROM ulid_lookup WHERE {where} ORDER BY n"
        cur.execute(query, [make(some)])
        tc.assertEqual(cur.fetchall(), [(5,), (401,), (LOOKUP_ROWS,)], query)
        uses_pkey(query, make(some))
