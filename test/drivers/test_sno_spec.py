"""sno checked against its published specification, not against the server's own codec:
sno_spec.py (written from the spec's text) reads 20,000 snos the server made (same text and
10 bytes both ways, the metabyte and partition asked, the tick-tock bit clear, the time within
the call, (time, sequence) strictly increasing in issue order, each metabyte's snos
increasing), and the server reads 4,000 snos the codec composed (every field, the tick-tock
bit both ways, times from 2010 to 2079) field for field and sorts them in the spec's order;
the spec's worked examples are known answers on both sides. (rs/xid's xids and KSUIDs:
test_xidref.sh.)"""
import os
import random
import unittest

import psycopg

import sno_spec

SHARD = int(os.environ["SNOWFLAKE_TEST_SHARD"])
SERVER_SNOS = 20000
CODEC_SNOS = 4000


class SnoSpec(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.conn = psycopg.connect(autocommit=True)

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()

    def test_codec_known_answers(self):
        """The codec itself: the spec's examples, its layout's ends, and what it refuses."""
        for text, b in sno_spec.KNOWN_ANSWERS:
            self.assertEqual(sno_spec.encode(b), text)
            self.assertEqual(sno_spec.decode(text), b)
        last = sno_spec.compose(sno_spec.MAX_UNITS, False, 255, 65000, 2)
        self.assertEqual(last.hex(), "fffffffffefffde80002")
        self.assertEqual(sno_spec.fields(last), (sno_spec.MAX_UNITS, False, 255, 65000, 2))
        self.assertEqual(sno_spec.LAST_UNIX_MS, 3461327255548)  # 2079-09-07 15:47:35.548 UTC
        self.assertEqual(sno_spec.fields(bytes(4) + b"\x01" + bytes(5))[:2], (0, True))
        for bad in ("brpk4q72xwf2m63", "brpk4q72xwf2m63l2", "Brpk4q72xwf2m63l",
                    "0rpk4q72xwf2m63l", "1rpk4q72xwf2m63l", "yrpk4q72xwf2m63l",
                    "zrpk4q72xwf2m63l"):
            with self.assertRaises(ValueError, msg=bad):
                sno_spec.decode(bad)

    def test_server_known_answers(self):
        with self.conn.cursor() as cur:
            for text, b in sno_spec.KNOWN_ANSWERS:
                cur.execute("SELECT %s::sno::bytea, %s::bytea::sno::text", (text, b))
                self.assertEqual(cur.fetchone(), (b, text))
            last = sno_spec.encode(sno_spec.compose(sno_spec.MAX_UNITS, False, 255, 65000, 2))
            cur.execute("SELECT sno_timestamp(%s::sno) = "
                        "'epoch'::timestamptz + %s * interval '1 ms'", (last, sno_spec.LAST_UNIX_MS))
            self.assertTrue(cur.fetchone()[0])

    def test_server_snos(self):
        """The server's snos, read by the codec in issue order."""
        with self.conn.cursor() as cur:
            # The IDs' clock may be ahead of the system clock (a reservation carried over a
            # restart): by at most the gap it shows before, which only shrinks.
            cur.execute("SELECT greatest(clock_gap_ms, 0) + 1 FROM snowflake_status()")
            gap = cur.fetchone()[0]
            cur.execute("""
SELECT n, floor(extract(epoch FROM before) * 1000)::bigint,
       ceil(extract(epoch FROM after) * 1000)::bigint, id::text, id::bytea
  FROM (SELECT n, clock_timestamp() AS before, sno(n %% 256) AS id, clock_timestamp() AS after
          FROM generate_series(1, %s) n) s
 ORDER BY n""", (SERVER_SNOS,))
            rows = cur.fetchall()
        self.assertEqual(len(rows), SERVER_SNOS)
        prev = None
        last_of_meta = {}
        for n, start, end, text, b in rows:
            b = bytes(b)
            where = "row %d, %s" % (n, text)
            self.assertEqual(sno_spec.decode(text), b, where)
            self.assertEqual(sno_spec.encode(b), text, where)
            units, tick, meta, partition, sequence = sno_spec.fields(b)
            self.assertEqual((meta, partition, tick), (n % 256, SHARD, False), where)
            # The call's window: from the 4 ms unit that holds its start less a millisecond
            # (two clocks read at different instants) to its end, plus the gap.
            ms = sno_spec.unix_ms(units)
            low = start - 1 - (start - 1) % 4
            self.assertTrue(low <= ms <= end + gap,
                            "%s: at %d ms, outside the call's %d to %d (+%d)" %
                            (where, ms, start, end, gap))
            # One stream: (time, sequence) strictly increasing whatever the metabyte; within
            # one metabyte the bytes, which hold the metabyte before the sequence.
            if prev is not None:
                self.assertGreater((units, sequence), prev, where)
            prev = (units, sequence)
            if meta in last_of_meta:
                self.assertGreater(b, last_of_meta[meta], where)
            last_of_meta[meta] = b
        # Text order is byte order (the spec's sortable encoding).
        texts = [r[3] for r in rows]
        self.assertEqual(sorted(texts), [sno_spec.encode(x) for x in sorted(bytes(r[4]) for r in rows)])

    def test_codec_snos(self):
        """The codec's snos, read and sorted by the server."""
        rng = random.Random(36)
        made = []
        for partition in (1, 65000):
            for meta in (0, 200):
                for i in range(CODEC_SNOS // 4):
                    # Any time sno holds, to the 4 ms unit, with either tick-tock bit.
                    units = rng.randrange(sno_spec.MAX_UNITS + 1) if i % 7 else i
                    made.append(sno_spec.compose(units, rng.random() < 0.5, meta, partition,
                                                 rng.randrange(65536)))
        made.append(sno_spec.compose(sno_spec.MAX_UNITS, True, 255, 65535, 65535))
        made.append(sno_spec.compose(0, False, 0, 0, 0))
        rows = [(sno_spec.encode(b), b) + sno_spec.fields(b) for b in made]
        with self.conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE sno_spec_made (t text, b bytea, units bigint, "
                        "tick boolean, meta int, partition int, sequence int)")
            with cur.copy("COPY sno_spec_made FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
            cur.execute("""
SELECT count(*),
       count(*) FILTER (WHERE t::sno::text = t AND t::sno::bytea = b AND b::sno = t::sno
                          AND b::sno::text = t),
       count(*) FILTER (WHERE d.ts = 'epoch'::timestamptz + (%s + units * 4) * interval '1 ms'
                          AND d.tick = m.tick AND d.meta = m.meta AND d.partition = m.partition
                          AND d.sequence = m.sequence AND sno_timestamp(t::sno) = d.ts)
  FROM sno_spec_made m, sno_decode(m.t::sno) d""", (sno_spec.EPOCH_UNIX_MS,))
            n = len(rows)
            self.assertEqual(cur.fetchone(), (n, n, n))
            cur.execute("SELECT t FROM sno_spec_made ORDER BY t::sno")
            self.assertEqual([r[0] for r in cur.fetchall()],
                             [sno_spec.encode(b) for b in sorted(made)])
            cur.execute("SELECT t FROM sno_spec_made ORDER BY b::sno DESC")
            self.assertEqual([r[0] for r in cur.fetchall()],
                             [sno_spec.encode(b) for b in sorted(made, reverse=True)])
            cur.execute("DROP TABLE sno_spec_made")


if __name__ == "__main__":
    unittest.main(verbosity=2)
