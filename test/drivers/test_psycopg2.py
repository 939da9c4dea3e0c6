"""psycopg2: text format only (it has no binary results); every kind read and written
exactly."""
import json
import unittest
import uuid

import psycopg2
import psycopg2.extras

import ids


class Psycopg2(unittest.TestCase):
    def setUp(self):
        self.conn = psycopg2.connect("")
        self.conn.autocommit = True
        self.cur = self.conn.cursor()
        self.cur.execute(ids.FIXTURE)
        self.ref = ids.reference(self.cur)

    def tearDown(self):
        self.conn.close()

    def read(self):
        self.cur.execute("SELECT k, sf, u, l FROM ids ORDER BY k")
        return self.cur.fetchall()

    def test_text(self):
        rows = self.read()
        k, sf, u, l = rows[0]
        self.assertIs(type(sf), int)
        self.assertIs(type(u), str)  # psycopg2 leaves uuid as text unless registered
        self.assertIs(type(l), str)
        ids.check_rows(self, rows, self.ref, ids.ulid_int)
        # psycopg2 quotes parameters into the statement on the client: text in, too.
        psycopg2.extras.execute_batch(
            self.cur, "INSERT INTO back VALUES (%s, %s, %s, %s)", rows)
        ids.check_back(self, self.cur)

    def test_register_uuid(self):
        psycopg2.extras.register_uuid(conn_or_curs=self.conn)
        rows = self.read()
        self.assertIsInstance(rows[0][2], uuid.UUID)
        ids.check_rows(self, rows, self.ref, ids.ulid_int)
        psycopg2.extras.execute_batch(
            self.cur, "INSERT INTO back VALUES (%s, %s, %s, %s)", rows)
        ids.check_back(self, self.cur)

    def test_ulid_key_by_uuid(self):
        """A ulid primary key looked up by uuid.UUID values after register_uuid(): psycopg2
        quotes each as '...'::uuid, a list as ARRAY[...] and a tuple for IN as (...)."""
        psycopg2.extras.register_uuid(conn_or_curs=self.conn)
        ids.check_ulid_lookups(self, self.cur, [("id = ANY(%s)", list), ("id IN %s", tuple)])

    def test_json(self):
        big = int(self.ref[0]["sf_text"])
        self.cur.execute("SELECT to_json(sf), to_json(sf::text) FROM ids WHERE k = 1")
        number, string = self.cur.fetchone()
        self.assertEqual(number, big)  # Python's json keeps big ints exact
        self.assertEqual(string, str(big))
        # docs/applications.md's examples.
        self.cur.execute("SELECT json_build_object('id', id::text, 'item', item) "
                         "FROM orders ORDER BY id")
        objs = [r[0] for r in self.cur.fetchall()]
        self.cur.execute("SELECT id::text FROM orders ORDER BY id")
        texts = [r[0] for r in self.cur.fetchall()]
        self.assertEqual([o["id"] for o in objs], texts)
        self.cur.execute("SELECT to_jsonb(id::text) FROM orders ORDER BY id")
        self.assertEqual([r[0] for r in self.cur.fetchall()], texts)
        self.cur.execute("SELECT to_json(u)::text, to_json(l)::text FROM ids WHERE k = 1")
        u, l = self.cur.fetchone()
        self.assertEqual(json.loads(u), self.ref[0]["u_text"])
        self.assertEqual(json.loads(l), self.ref[0]["l_text"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
