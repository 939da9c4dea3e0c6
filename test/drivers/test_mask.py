"""Masking: the client library (mask_client.py) and the server agree, token for token.

Bigint tokens for 10,000 IDs (snowflake() IDs, random 64-bit values and the edges), ULIDs and
UUIDv7 façades: made in the client and unmasked in the server, made in the server and
unmasked in the client, and equal wherever both make them; a changed character, a wrong
prefix and a token of another key ring are refused by both. The server reads the key file
that SNOWFLAKE_MASK_KEY_FILE names (its snowflake.mask_key_file); the client reads the same.
"""
import os
import random
import unittest
import uuid

import psycopg

import mask_client
from mask_client import ALPHABET, InvalidToken, Keyring

KEY_FILE = os.environ["SNOWFLAKE_MASK_KEY_FILE"]
EDGES = [0, 1, -1, 2**63 - 1, -2**63]
PREFIXES = ["", "ord", "user_account"]

# The server's answer to a token it refuses, as a NULL (so that thousands go in one query).
TRY_UNMASK = """
CREATE FUNCTION pg_temp.try_unmask(token text, prefix text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF prefix IS NULL THEN
    RETURN snowflake_unmask(token);
  END IF;
  RETURN snowflake_unmask(token, prefix);
EXCEPTION WHEN invalid_text_representation THEN  -- 22P02, and only that
  RETURN NULL;
END $$"""


def changed(token, rng):
    """The token with one character replaced by another that a token may hold there."""
    i = rng.randrange(len(token))
    c = token[i]
    if c == "_":
        return changed(token, rng)
    prefix_len = token.rfind("_") + 1
    pool = "abcdefghijklmnopqrstuvwxyz" if i < prefix_len else ALPHABET
    return token[:i] + rng.choice([x for x in pool if x != c]) + token[i + 1:]


class Mask(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.conn = psycopg.connect(autocommit=True)
        cls.keys = Keyring.from_file(KEY_FILE)
        cls.other = next(k for k in cls.keys.key_ids if k != cls.keys.active)
        cls.conn.execute(TRY_UNMASK)
        rng = random.Random(47)
        made = cls.conn.execute("SELECT snowflake() FROM generate_series(1, 4995)").fetchall()
        cls.ids = EDGES + [r[0] for r in made] + [rng.randrange(-2**63, 2**63) for _ in range(5000)]
        assert len(cls.ids) == 10000

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()

    def q(self, sql, *params):
        return self.conn.execute(sql, params).fetchone()[0]

    def server_unmask(self, tokens, prefix=None):
        """The server's snowflake_unmask() of each token (None where it refuses one)."""
        return self.q("SELECT array_agg(pg_temp.try_unmask(t, %s) ORDER BY n) "
                      "FROM unnest(%s::text[]) WITH ORDINALITY x(t, n)", prefix, tokens)

    def server_mask(self, values, prefix=None):
        if prefix is None:
            return self.q("SELECT array_agg(snowflake_mask(i) ORDER BY n) "
                          "FROM unnest(%s::bigint[]) WITH ORDINALITY x(i, n)", values)
        return self.q("SELECT array_agg(snowflake_mask(i, %s) ORDER BY n) "
                      "FROM unnest(%s::bigint[]) WITH ORDINALITY x(i, n)", prefix, values)

    def refused_by_client(self, token, prefix=None):
        with self.assertRaises(InvalidToken, msg=token):
            if prefix is None:
                self.keys.unmask(token)
            else:
                self.keys.unmask(token, prefix)

    def test_reference_vectors(self):
        # SipHash-2-4's own vector (key 00..0f, message 00..0e), and a façade that
        # uuidv47's C code (uuidv47.h) makes with key a0..af.
        self.assertEqual(mask_client._siphash24(bytes(range(16)), bytes(range(15))),
                         0xA129CA6149BE45E5)
        v7 = uuid.UUID("03142536-4758-797a-8b9c-adbecfe0f102")
        facade = mask_client._facade(v7.bytes, 4, bytes(range(0xA0, 0xB0)))
        self.assertEqual(uuid.UUID(bytes=facade), uuid.UUID("ce3d41b7-353a-497a-8b9c-adbecfe0f102"))
        # uuidv7_mask()'s façade, as test/unit/mask_test.cpp has it.
        facade = mask_client._facade_v7(bytes.fromhex("0190a1b2c3d47e5f8a9b0c1d2e3f4051"), 4,
                                        bytes(range(16)))
        self.assertEqual(facade.hex(), "a484994e78f1406b8a9b0c1d2e3f4051")

    def test_bigint_client_to_server(self):
        for prefix in PREFIXES:
            with self.subTest(prefix=prefix):
                tokens = [self.keys.mask(i, prefix) for i in self.ids]
                self.assertEqual(self.server_unmask(tokens, prefix), self.ids)
                # Without the prefix, only a token made without one.
                self.assertEqual(self.server_unmask(tokens),
                                 self.ids if prefix == "" else [None] * len(tokens))
                # Any case; and tokens of the key that is not active (made before a rotation).
                self.assertEqual(self.server_unmask([t.upper() for t in tokens[:1000]], prefix),
                                 self.ids[:1000])
                older = [self.keys.mask(i, prefix, key_id=self.other) for i in self.ids[:1000]]
                self.assertEqual(self.server_unmask(older, prefix), self.ids[:1000])

    def test_bigint_server_to_client(self):
        for prefix in PREFIXES:
            with self.subTest(prefix=prefix):
                tokens = self.server_mask(self.ids, prefix)
                # The same key, the same block: the same token, character for character.
                self.assertEqual(tokens, [self.keys.mask(i, prefix) for i in self.ids])
                self.assertEqual([self.keys.unmask(t, prefix) for t in tokens], self.ids)
                for t in tokens:
                    body = t[len(prefix) + 1:] if prefix else t
                    self.assertEqual(len(body), 26)
        self.assertEqual(self.server_mask(self.ids[:100]), self.server_mask(self.ids[:100], ""))

    def test_changed_character(self):
        rng = random.Random(7)
        for prefix in PREFIXES:
            with self.subTest(prefix=prefix):
                tokens = self.server_mask(self.ids[:2000], prefix)
                bad = [changed(t, rng) for t in tokens]
                # A first character past '7' would carry a 131st bit: refused as a form.
                bad += [t[:len(t) - 26] + rng.choice(ALPHABET[8:]) + t[len(t) - 25:]
                        for t in tokens[:200]]
                # i, l, o and u are not Crockford digits (no reading of them as 1 or 0).
                bad += [t[:-1] + rng.choice("ilou") for t in tokens[:200]]
                for b in bad:
                    self.refused_by_client(b, prefix)
                self.assertEqual(self.server_unmask(bad, prefix), [None] * len(bad))

    def test_wrong_prefix(self):
        tokens = self.server_mask(self.ids[:1000], "ord")
        bodies = [t[4:] for t in tokens]
        cases = {
            "asked for another": (tokens, "usr"),
            "another written": (["usr_" + b for b in bodies], None),
            "none written": (bodies, None),
            "none written, asked for its own": (bodies, "ord"),
            "a longer one written": (["ord_x_" + b for b in bodies], None),
        }
        for name, (bad, prefix) in cases.items():
            with self.subTest(name):
                for b in bad:
                    self.refused_by_client(b, prefix)
                self.assertEqual(self.server_unmask(bad, prefix), [None] * len(bad))
        plain = self.server_mask(self.ids[:1000])
        for written in ("ord_", "_"):
            for b in plain[:100]:
                self.refused_by_client(written + b)
            self.assertEqual(self.server_unmask([written + b for b in plain]), [None] * 1000)
        self.assertEqual(self.server_unmask(plain, "ord"), [None] * 1000)

    def test_colliding_prefixes(self):
        # SHA-256 of these share their first 5 bytes: a sno token moved from one to the other
        # unmasked while the prefix check was that digest. Keyed, both sides refuse it.
        sno = self.conn.execute("SELECT sno(7)::bytea").fetchone()[0]
        made = self.q("SELECT sno_mask(%s::bytea::sno, 'xbxgqz')", sno)
        self.assertEqual(made, self.keys.sno_mask(sno, "xbxgqz"))
        moved = made.replace("xbxgqz", "xchvbg")
        with self.assertRaises(InvalidToken):
            self.keys.sno_unmask(moved, "xchvbg")
        with self.assertRaises(psycopg.errors.InvalidTextRepresentation):
            self.conn.execute("SELECT sno_unmask(%s, 'xchvbg')", (moved,))
        tokens = [self.keys.mask(i, "xbxgqz").replace("xbxgqz", "xchvbg") for i in self.ids[:1000]]
        self.assertEqual(self.server_unmask(tokens, "xchvbg"), [None] * 1000)

    def test_another_key_ring(self):
        stranger = Keyring({3: os.urandom(32)}, 3)
        tokens = [stranger.mask(i, "ord") for i in self.ids[:1000]]
        for t in tokens[:100]:
            self.refused_by_client(t, "ord")
        self.assertEqual(self.server_unmask(tokens, "ord"), [None] * 1000)

    def test_ulid(self):
        rows = self.conn.execute(
            "SELECT l::bytea, ulid_mask(l)::bytea, ulid_mask(l, %s)::bytea, ulid_mask(l)::text "
            "FROM (SELECT ulid() AS l FROM generate_series(1, 3000)) s", (self.other,)).fetchall()
        for ulid, masked, masked_other, text in rows:
            self.assertEqual(masked, self.keys.ulid_mask(ulid))
            self.assertEqual(masked_other, self.keys.ulid_mask(ulid, self.other))
            self.assertEqual(text, self.keys.ulid_mask(mask_client._base32(ulid).upper()))
            self.assertEqual(self.keys.ulid_unmask(masked), ulid)
            self.assertEqual(self.keys.ulid_unmask(masked_other, self.other), ulid)
        ulids = [r[0] for r in rows]
        for key_id in (None, self.other):
            with self.subTest(key_id=key_id):
                sent = [self.keys.ulid_mask(u, key_id) for u in ulids]
                back = self.q("SELECT array_agg(ulid_unmask(b::ulid"
                              + (", %s" if key_id is not None else "")
                              + ")::bytea ORDER BY n) FROM unnest(%s::bytea[]) WITH ORDINALITY x(b, n)",
                              *([key_id] if key_id is not None else []), sent)
                self.assertEqual(back, ulids)

    def test_sno(self):
        # sno tokens: made by the server and by the client alike, both ways, with the key that
        # is not active too; a sno token is refused as a bigint token and the other way round.
        snos = [r[0] for r in self.conn.execute(
            "SELECT sno(g % 256)::bytea FROM generate_series(1, 3000) g").fetchall()]
        for prefix in ("", "ord"):
            with self.subTest(prefix=prefix):
                made = self.q("SELECT array_agg(sno_mask(b::sno, %s) ORDER BY n) "
                              "FROM unnest(%s::bytea[]) WITH ORDINALITY x(b, n)", prefix, snos)
                self.assertEqual(made, [self.keys.sno_mask(s, prefix) for s in snos])
                self.assertEqual([self.keys.sno_unmask(t, prefix) for t in made], snos)
                older = [self.keys.sno_mask(s, prefix, key_id=self.other) for s in snos[:500]]
                back = self.q("SELECT array_agg(sno_unmask(t, %s)::bytea ORDER BY n) "
                              "FROM unnest(%s::text[]) WITH ORDINALITY x(t, n)", prefix, older)
                self.assertEqual(back, snos[:500])
                self.assertEqual(self.server_unmask(made[:500], prefix), [None] * 500)
                for t in made[:200]:
                    self.refused_by_client(t, prefix)
                for t in self.server_mask(self.ids[:200], prefix):
                    with self.assertRaises(InvalidToken, msg=t):
                        self.keys.sno_unmask(t, prefix)

    def test_uuidv7_facade(self):
        for name in ("uuidv7", "uuidv47"):
            with self.subTest(name):
                self.facade_both_ways(name)

    def facade_both_ways(self, name):
        mask, unmask = f"{name}_mask", f"{name}_unmask"
        rows = self.conn.execute(
            f"SELECT u, {mask}(u), {mask}(u, %s) "
            "FROM (SELECT snowflake_uuidv7() AS u FROM generate_series(1, 3000)) s",
            (self.other,)).fetchall()
        for u, facade, facade_other in rows:
            self.assertEqual(u.version, 7)
            self.assertEqual(facade.version, 4)
            self.assertEqual(facade.variant, uuid.RFC_4122)
            self.assertNotEqual(facade.bytes[:6], u.bytes[:6])
            self.assertEqual(facade.bytes[8:], u.bytes[8:])
            if name == "uuidv47":  # rand_a, the counter, shows through
                self.assertEqual(facade.bytes[6:8], bytes([0x40 | u.bytes[6] & 0x0F, u.bytes[7]]))
            self.assertEqual(facade, getattr(self.keys, mask)(u))
            self.assertEqual(facade_other, getattr(self.keys, mask)(u, self.other))
            self.assertEqual(getattr(self.keys, unmask)(facade), u)
            self.assertEqual(getattr(self.keys, unmask)(facade_other, self.other), u)
        uuids = [r[0] for r in rows]
        for key_id in (None, self.other):
            with self.subTest(key_id=key_id):
                sent = [getattr(self.keys, mask)(u, key_id) for u in uuids]
                back = self.q(f"SELECT array_agg({unmask}(f"
                              + (", %s" if key_id is not None else "")
                              + ") ORDER BY n) FROM unnest(%s::uuid[]) WITH ORDINALITY x(f, n)",
                              *([key_id] if key_id is not None else []), sent)
                self.assertEqual(back, uuids)
        # Each way takes its own version and RFC 9562's variant alone, in both.
        v4 = uuid.uuid4()
        other_variant = uuid.UUID(bytes=uuids[0].bytes[:8] + bytes([uuids[0].bytes[8] | 0xC0])
                                  + uuids[0].bytes[9:])
        for call, value in ((mask, v4), (unmask, uuids[0]), (mask, other_variant)):
            with self.assertRaises(psycopg.errors.InvalidParameterValue):
                self.conn.execute(f"SELECT {call}(%s)", (value,))
            with self.assertRaises(ValueError):
                getattr(self.keys, call)(value)


if __name__ == "__main__":
    unittest.main(verbosity=2)
