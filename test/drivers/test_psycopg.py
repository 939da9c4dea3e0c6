"""psycopg 3: every kind read and written in text and in binary format, exactly."""
import json
import unittest
import uuid

import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

import ids


class Ulid:
    """A ULID as an application may hold it: its 16 bytes; str() is the 26-character text."""

    __slots__ = ("bytes",)

    def __init__(self, b):
        if len(b) != 16:
            raise ValueError("a ULID is 16 bytes")
        self.bytes = bytes(b)

    def __eq__(self, other):
        return isinstance(other, Ulid) and self.bytes == other.bytes

    def __lt__(self, other):
        return self.bytes < other.bytes

    def __hash__(self):
        return hash(self.bytes)

    def __str__(self):
        return ids.ulid_text(int.from_bytes(self.bytes, "big"))


def register_ulid(conn):
    """Binary adapters for the extension's ulid: its send/recv format is the 16 bytes."""
    info = TypeInfo.fetch(conn, "ulid")

    class UlidBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return Ulid(data)

    class UlidBinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return obj.bytes

    conn.adapters.register_loader(info.oid, UlidBinaryLoader)
    conn.adapters.register_dumper(Ulid, UlidBinaryDumper)


class Psycopg3(unittest.TestCase):
    def setUp(self):
        self.conn = psycopg.connect(autocommit=True)
        self.conn.execute(ids.FIXTURE)
        self.ref = ids.reference(self.conn.cursor())

    def tearDown(self):
        self.conn.close()

    def test_text(self):
        rows = self.conn.execute("SELECT k, sf, u, l FROM ids ORDER BY k").fetchall()
        k, sf, u, l = rows[0]
        self.assertIs(type(sf), int)
        self.assertIsInstance(u, uuid.UUID)
        self.assertIs(type(l), str)  # a type psycopg does not know: its text
        self.assertEqual(len(l), 26)
        ids.check_rows(self, rows, self.ref, ids.ulid_int)
        # Written back as parameters (psycopg 3 binds them server-side).
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO back VALUES (%s, %s, %s, %s)", rows)
            ids.check_back(self, cur)

    def test_binary(self):
        with self.conn.cursor(binary=True) as cur:
            rows = cur.execute("SELECT k, sf, u, l FROM ids ORDER BY k").fetchall()
            self.assertTrue(all(cur.pgresult.fformat(i) == Format.BINARY for i in range(4)))
        k, sf, u, l = rows[0]
        self.assertIs(type(sf), int)
        self.assertIsInstance(u, uuid.UUID)
        self.assertIs(type(l), bytes)  # unknown type in binary: ulid_send's 16 bytes, raw
        self.assertEqual(len(l), 16)
        ids.check_rows(self, rows, self.ref, lambda b: int.from_bytes(b, "big"))
        # Written back in binary (%b): bigint and uuid by psycopg's dumpers; the 16 bytes
        # of a ulid as bytea, cast on the server.
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO back VALUES (%b, %b, %b, %b::bytea::ulid)", rows)
            ids.check_back(self, cur)

    def test_binary_ulid_adapter(self):
        register_ulid(self.conn)
        with self.conn.cursor(binary=True) as cur:
            rows = cur.execute("SELECT k, sf, u, l FROM ids ORDER BY k").fetchall()
        self.assertIsInstance(rows[0][3], Ulid)
        ids.check_rows(self, rows, self.ref, lambda x: int.from_bytes(x.bytes, "big"))
        self.assertEqual([str(r[3]) for r in rows], [r["l_text"] for r in self.ref])
        # The dumper sends each ulid in binary with the ulid type's OID: ulid_recv reads it.
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO back VALUES (%b, %b, %b, %b)", rows)
            ids.check_back(self, cur)
        # Binary input of another length than 16 is an error, never a value.
        for length, error in ((17, psycopg.errors.InvalidBinaryRepresentation),  # 22P03
                              (15, psycopg.errors.ProtocolViolation)):  # 08P01
            bad = Ulid.__new__(Ulid)
            bad.bytes = bytes(length)
            with self.assertRaises(error):
                self.conn.execute("SELECT %b", [bad])

    def test_ulid_key_by_uuid(self):
        """A ulid primary key looked up by uuid.UUID values, which psycopg 3 binds as uuid
        parameters on the server; a list of them, as uuid[]."""
        with self.conn.cursor() as cur:
            ids.check_ulid_lookups(self, cur, [("id = ANY(%s)", list)])

    def test_json(self):
        cur = self.conn.cursor()
        big = int(self.ref[0]["sf_text"])
        # The number form: Python's json module (and psycopg's json loader) keeps big ints
        # exact, unlike JavaScript, so both forms arrive exact here.
        number, string = cur.execute(
            "SELECT to_json(sf), to_json(sf::text) FROM ids WHERE k = 1").fetchone()
        self.assertEqual(number, big)
        self.assertEqual(string, str(big))
        # docs/applications.md's examples.
        row = cur.execute("SELECT json_build_object('id', id::text, 'item', item) "
                          "FROM orders ORDER BY id LIMIT 1").fetchone()[0]
        self.assertIs(type(row["id"]), str)
        whole = cur.execute("SELECT to_jsonb(o) || jsonb_build_object('id', o.id::text) "
                            "FROM orders o ORDER BY id").fetchall()
        texts = [r[0] for r in cur.execute("SELECT id::text FROM orders ORDER BY id")]
        self.assertEqual([w[0]["id"] for w in whole], texts)
        self.assertEqual([w[0]["item"] for w in whole], ["tea", "cake"])
        # uuid and ulid: JSON strings, the types' own text.
        u, l = cur.execute("SELECT to_json(u)::text, to_json(l)::text FROM ids "
                           "WHERE k = 1").fetchone()
        self.assertEqual(json.loads(u), self.ref[0]["u_text"])
        self.assertEqual(json.loads(l), self.ref[0]["l_text"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
