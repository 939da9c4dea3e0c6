"""SQLAlchemy (1.4 or 2.0, psycopg2): the recipe of docs/applications.md, run as written. The
tables it declares are created, reflected back (ulid as the recipe's type, without a
warning), filled by the server's defaults, read back, and filtered by a key and by a range of
time."""
import os
import time
import unittest
import uuid
import warnings

import psycopg2
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

import ids
import recipes

SCHEMA = "orm_sqlalchemy"


def server_now(session):
    """The server's clock, between two batches of rows a few milliseconds apart."""
    time.sleep(0.005)
    now = session.execute(sa.text("SELECT clock_timestamp()")).scalar_one()
    time.sleep(0.005)
    return now


class SQLAlchemyRecipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Any warning is a failure: SAWarning for a type reflection does not know, and
        # deprecations that the next SQLAlchemy turns into errors.
        warnings.simplefilter("error")
        with psycopg2.connect("") as conn, conn.cursor() as cur:
            cur.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA}")
        conn.close()
        # The recipe's engine connects from libpq's environment: its tables go to SCHEMA.
        os.environ["PGOPTIONS"] = f"-c search_path={SCHEMA},public"
        cls.ns = recipes.run(recipes.block("import sqlalchemy"), {"__name__": "recipe"})
        recipes.run(recipes.block("def add_families"), cls.ns)  # keys from blocks
        cls.engine = cls.ns["engine"]
        cls.ns["Base"].metadata.create_all(cls.engine)

    @classmethod
    def tearDownClass(cls):
        cls.engine.dispose()

    def test_reflect(self):
        ULID = self.ns["ULID"]
        meta = sa.MetaData()
        orders = sa.Table("orders", meta, autoload_with=self.engine)
        events = sa.Table("events", meta, autoload_with=self.engine)
        self.assertIsInstance(events.c.id.type, ULID)
        self.assertIsInstance(events.c.follows.type, postgresql.ARRAY)
        self.assertIsInstance(events.c.follows.type.item_type, ULID)
        self.assertIsInstance(events.c.request.type, postgresql.UUID)
        self.assertIsInstance(orders.c.id.type, sa.BigInteger)
        # The keys' defaults are the generators (not a serial's nextval()).
        defaults = {(t.name, c.name): c.server_default.arg.text
                    for t in (orders, events) for c in t.c if c.server_default is not None}
        self.assertEqual(defaults, {("orders", "id"): "snowflake()",
                                    ("events", "id"): "ulid()",
                                    ("events", "request"): "snowflake_uuidv7()"})
        self.assertEqual([c.name for c in events.primary_key], ["id"])
        # Without the recipe's line, reflection warns and does not know the type.
        del postgresql.base.ischema_names["ulid"]
        try:
            with self.assertWarnsRegex(sa.exc.SAWarning, "Did not recognize type 'ulid'"):
                bare = sa.Table("events", sa.MetaData(), autoload_with=self.engine)
            self.assertIsInstance(bare.c.id.type, sa.types.NullType)
        finally:
            postgresql.base.ischema_names["ulid"] = ULID

    def test_insert_read_filter(self):
        Order, Event = self.ns["Order"], self.ns["Event"]
        events_between = self.ns["events_between"]
        batches = []
        bounds = []
        with Session(self.engine) as s:
            for n in range(3):
                if n:
                    bounds.append(server_now(s))
                order = Order(item=f"order {n}")
                s.add(order)
                s.flush()  # INSERT ... RETURNING: the key is the server's
                self.assertIs(type(order.id), int)
                self.assertGreater(order.id, 2**53)
                self.assertEqual((order.id >> 10) & 0x1FFF, ids.SHARD)
                events = [Event(order_id=order.id) for _ in range(4)]
                s.add_all(events)
                s.flush()
                events[-1].follows = [e.id for e in events[:-1]]
                s.flush()
                batches.append((order.id, [e.id for e in events], [e.request for e in events]))
            s.commit()

        for order_id, keys, requests in batches:
            for key, request in zip(keys, requests):
                self.assertIs(type(key), str)
                self.assertEqual(len(key), 26)
                self.assertIsInstance(request, uuid.UUID)
                self.assertEqual(request.version, 7)
        all_keys = [k for b in batches for k in b[1]]
        self.assertEqual(all_keys, sorted(all_keys))  # issue order
        self.assertEqual(len(set(all_keys)), len(all_keys))

        with Session(self.engine) as s:
            # The server holds what the session was given.
            rows = s.execute(sa.text(
                "SELECT id::text, request, order_id, ulid_timestamp(id) FROM events ORDER BY id")).all()
            self.assertEqual([r[0] for r in rows], all_keys)
            self.assertEqual([r[1] for r in rows], [q for b in batches for q in b[2]])
            # Read back by key, ulid[] as a list of the ULIDs' text.
            order_id, keys, requests = batches[1]
            last = s.get(Event, keys[-1])
            self.assertEqual((last.id, last.request, last.order_id), (keys[-1], requests[-1], order_id))
            self.assertEqual(last.follows, keys[:-1])
            self.assertIsNone(s.get(Event, keys[0]).follows)
            self.assertEqual(s.get(Order, order_id).item, "order 1")
            got = s.scalars(sa.select(Event.request).where(Event.id == keys[1])).all()
            self.assertEqual(got, [requests[1]])
            got = s.scalars(sa.select(Event.id).where(Event.id.in_(keys[:2])).order_by(Event.id)).all()
            self.assertEqual(got, keys[:2])
            # A range of time: the recipe's ulid_at() bounds give the middle batch exactly...
            since, until = bounds
            self.assertEqual([e.id for e in events_between(s, since, until)], keys)
            self.assertEqual([e.id for e in events_between(s, since, since)], [])
            # ...and so do snowflake_at() and uuidv7_at() on the other kinds, and the decoder.
            got = s.scalars(sa.select(Order.id).where(
                Order.id >= sa.func.snowflake_at(since), Order.id < sa.func.snowflake_at(until))).all()
            self.assertEqual(got, [order_id])
            got = s.scalars(sa.select(Event.request).order_by(Event.request).where(
                Event.request >= sa.func.uuidv7_at(since),
                Event.request < sa.func.uuidv7_at(until))).all()
            self.assertEqual(got, requests)
            stamp = sa.func.ulid_timestamp(Event.id)
            got = s.scalars(sa.select(Event.id).order_by(Event.id).where(
                stamp >= since, stamp < until)).all()
            self.assertEqual(got, keys)
            # a bad key is the server's ERROR, not a silent miss
            with self.assertRaises(sa.exc.DataError) as bad:
                s.get(Event, "not a ulid")
            self.assertEqual(bad.exception.orig.pgcode, "22P02")

    def test_parents_and_children_with_keys_from_blocks(self):
        families = [(f"family {i}", 3) for i in range(2500)]  # 10,000 rows, blocks of 1,000
        with Session(self.engine) as s:
            s.execute(sa.text("INSERT INTO parents (name) VALUES ('before')"))
            self.ns["add_families"](s, families)
            s.execute(sa.text("INSERT INTO parents (name) VALUES ('after')"))
            s.commit()
        with Session(self.engine) as s:
            rows = s.execute(sa.text(
                "SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM children), "
                "(SELECT count(*) FROM children c JOIN parents p ON p.id = c.parent_id), "
                "(SELECT min(id) FROM parents WHERE name <> 'before') "
                "  > (SELECT id FROM parents WHERE name = 'before'), "
                "(SELECT max(id) FROM children) < (SELECT id FROM parents WHERE name = 'after')"
            )).one()
        self.assertEqual(tuple(rows), (2502, 7500, 7500, True, True))


if __name__ == "__main__":
    print(f"SQLAlchemy {sa.__version__}, psycopg2 {psycopg2.__version__.split()[0]}", flush=True)
    unittest.main(verbosity=2)
