"""Django (3.2 to 5.x): the recipe of docs/applications.md, run as written: the field, and
the models of the Django at hand (db_default from 5.0, a key field with a migration's default
before). The tables are created, filled by the server's defaults, read back, and filtered by
a key and by a range of time."""
import os
import sys
import tempfile
import time
import unittest
import uuid

import django
from django.conf import settings

import ids
import recipes

SCHEMA = "orm_django"
APP = "shop"  # the app label the recipe's migration names


def setup():
    """Settings in code, and an empty app package for the recipe's models to belong to."""
    where = tempfile.mkdtemp(prefix="snowflake-django-")
    os.mkdir(os.path.join(where, APP))
    open(os.path.join(where, APP, "__init__.py"), "w").close()
    sys.path.insert(0, where)
    settings.configure(
        DATABASES={"default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": os.environ["PGDATABASE"],  # the rest from libpq's environment
            "OPTIONS": {"options": f"-c search_path={SCHEMA},public"},
        }},
        INSTALLED_APPS=[APP],
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()


setup()
from django.db import connection, models  # noqa: E402 (after the settings)

NEW = django.VERSION >= (5, 0)


def recipe():
    """The field block, then the models for this Django, in the app's models module."""
    ns = {"__name__": f"{APP}.models"}
    recipes.run(recipes.block("from django.db import models"), ns)
    recipes.run(recipes.block("db_default=" if NEW else "AutoFieldMixin"), ns)
    return ns


def server_now():
    time.sleep(0.005)
    with connection.cursor() as cur:
        cur.execute("SELECT clock_timestamp()")
        now = cur.fetchone()[0]
    time.sleep(0.005)
    return now


class DjangoRecipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ns = recipe()
        cls.Order, cls.Event = cls.ns["Order"], cls.ns["Event"]
        with connection.cursor() as cur:
            cur.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA}")
        with connection.schema_editor() as editor:
            editor.create_model(cls.Order)
            editor.create_model(cls.Event)
            if not NEW:  # what the recipe's migration does
                for op in cls.ns["Migration"].operations:
                    editor.execute(op.sql)

    def column(self, table, name):
        with connection.cursor() as cur:
            cur.execute("""SELECT format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid)
                             FROM pg_attribute a LEFT JOIN pg_attrdef d
                               ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                            WHERE a.attrelid = %s::regclass AND a.attname = %s""",
                        [f"{SCHEMA}.{table}", name])
            return cur.fetchone()

    def test_tables(self):
        self.assertEqual(self.Order._meta.db_table, f"{APP}_order")
        self.assertEqual(self.Event._meta.db_table, f"{APP}_event")
        self.assertEqual(self.column("shop_order", "id"), ("bigint", "snowflake()"))
        self.assertEqual(self.column("shop_event", "id"), ("ulid", "ulid()"))
        self.assertEqual(self.column("shop_event", "order_id"), ("bigint", None))
        if NEW:
            self.assertEqual(self.column("shop_event", "request"), ("uuid", "snowflake_uuidv7()"))
        # What inspectdb would see: the column and its type's name.
        with connection.cursor() as cur:
            described = connection.introspection.get_table_description(cur, "shop_event")
        self.assertIn("id", [c.name for c in described])

    def test_insert_read_filter(self):
        Order, Event = self.Order, self.Event
        UlidAt, SnowflakeAt = self.ns["UlidAt"], self.ns["SnowflakeAt"]
        batches, bounds = [], []
        for n in range(3):
            if n:
                bounds.append(server_now())
            order = Order.objects.create(item=f"order {n}")
            events = [Event.objects.create(order=order)]
            for _ in range(3):
                e = Event(order=order)
                e.save()  # a new object: INSERT, not an UPDATE of a key that is not there
                events.append(e)
            batches.append((order, events))

        for order, events in batches:
            self.assertIs(type(order.pk), int)  # the server's key, read back by RETURNING
            self.assertGreater(order.pk, 2**53)
            self.assertEqual((order.pk >> 10) & 0x1FFF, ids.SHARD)
            for e in events:
                self.assertIs(type(e.pk), str)
                self.assertEqual(len(e.pk), 26)
                if NEW:  # a db_default that is not the key comes back too
                    self.assertIsInstance(e.request, uuid.UUID)
                    self.assertEqual(e.request.version, 7)
        keys = [e.pk for _, events in batches for e in events]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(len(set(keys)), len(keys))
        self.assertEqual(list(Event.objects.order_by("pk").values_list("pk", flat=True)), keys)
        with connection.cursor() as cur:
            cur.execute("SELECT id::text FROM shop_event ORDER BY id")
            self.assertEqual([r[0] for r in cur.fetchall()], keys)

        # By key: get, filter, a join, and a save that updates.
        order, events = batches[1]
        got = Event.objects.get(pk=events[2].pk)
        self.assertEqual((got.pk, got.order_id), (events[2].pk, order.pk))
        if NEW:
            self.assertEqual(got.request, events[2].request)
        self.assertEqual(Order.objects.get(pk=order.pk).item, "order 1")
        self.assertEqual(Event.objects.filter(order__item="order 1").count(), 4)
        self.assertEqual(list(Event.objects.filter(pk__in=keys[:2]).order_by("pk")
                              .values_list("pk", flat=True)), keys[:2])
        got.order = batches[0][0]
        got.save()
        self.assertEqual(Event.objects.get(pk=got.pk).order_id, batches[0][0].pk)
        self.assertEqual(Event.objects.count(), len(keys))
        got.order = order
        got.save()

        # A range of time: the recipe's bounds give the middle batch exactly.
        since, until = bounds
        middle = [e.pk for e in events]
        got = Event.objects.filter(pk__gte=UlidAt(since), pk__lt=UlidAt(until)).order_by("pk")
        self.assertEqual([e.pk for e in got], middle)
        self.assertFalse(Event.objects.filter(pk__gte=UlidAt(since), pk__lt=UlidAt(since)).exists())
        got = Order.objects.filter(pk__gte=SnowflakeAt(since), pk__lt=SnowflakeAt(until))
        self.assertEqual([o.pk for o in got], [order.pk])
        # and the decoder, as a timestamp
        stamp = models.Func(models.F("pk"), function="ulid_timestamp",
                            output_field=models.DateTimeField())
        got = (Event.objects.annotate(at=stamp).filter(at__gte=since, at__lt=until)
               .order_by("pk").values_list("pk", flat=True))
        self.assertEqual(list(got), middle)

    def test_bulk_create_with_keys_from_a_block(self):
        Order = self.Order
        recipes.run(recipes.block("def bulk_create_with_block"), self.ns)
        before = Order.objects.create(item="before")
        made = self.ns["bulk_create_with_block"](
            Order, [Order(item=f"bulk {i}") for i in range(1000)])
        after = Order.objects.create(item="after")
        keys = [o.pk for o in made]
        self.assertEqual(len(set(keys)), 1000)
        self.assertEqual(keys, sorted(keys))
        self.assertTrue(before.pk < keys[0] and keys[-1] < after.pk)
        self.assertEqual(Order.objects.filter(item__startswith="bulk ").count(), 1000)
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM snowflake_block_ids(%s, %s)", [keys[0], keys[-1]])
            self.assertEqual(cur.fetchone()[0], 1000)
        # An empty list does nothing; a generator is taken whole.
        self.assertEqual(self.ns["bulk_create_with_block"](Order, []), [])
        made = self.ns["bulk_create_with_block"](Order, (Order(item=f"gen {i}") for i in range(5)))
        self.assertEqual(len({o.pk for o in made}), 5)
        self.assertEqual(Order.objects.filter(item__startswith="gen ").count(), 5)


if __name__ == "__main__":
    print(f"Django {django.get_version()}, {connection.vendor} by {connection.Database.__name__} "
          f"{connection.Database.__version__.split()[0]}", flush=True)
    unittest.main(verbosity=2)
