"""Masking of snowflake's IDs in an application: the same tokens and façades as the
extension's snowflake_mask(), ulid_mask() and uuidv7_mask(), and their unmasking, from
the same key file (snowflake.mask_key_file), without a round trip to the server.

A client library to copy: it needs Python 3.7 or later, its standard library (hashlib,
hmac) and the cryptography package for AES (Debian: python3-cryptography).

    keys = Keyring.from_file("/etc/myapp/mask.keys")
    token = keys.mask(7302873490812930049, "ord")    # 'ord_3k...' (26 characters after '_')
    keys.unmask(token, "ord")                         # 7302873490812930049
    facade = keys.uuidv7_mask(uuid.UUID("0190..."))   # a UUID of version 4
    keys.ulid_mask(b"\\x01\\x90...")                  # 16 bytes in, 16 bytes out

The key file holds one key a line, "ID HEX [active]": ID from 0 to 255, HEX the 64 hex
digits of a 32-byte master key (make one with `openssl rand -hex 32`), and the word
"active" on exactly one line; "#" starts a comment, blank lines are skipped. Each use has
a key of its own, HMAC-SHA256(master key, label):

    "snowflake mask bigint v1"   AES-256 key of the bigint tokens
    "snowflake mask bigint prefix v1"
                                 HMAC-SHA256 key of the bigint tokens' prefix check
    "snowflake mask ulid v1"     AES-256 key of ulid_mask
    "snowflake mask sno v1"      AES-256 key of the sno tokens
    "snowflake mask sno prefix v1"
                                 HMAC-SHA256 key of the sno tokens' prefix check
    "snowflake mask uuidv7 v1"   its first 16 bytes: the SipHash-2-4 key of uuidv7_mask's
                                 façade (k0 and k1, each little-endian)
    "snowflake mask uuidv47 v1"  its first 16 bytes: the SipHash-2-4 key of uuidv47_mask's
                                 façade (uuidv47's k0 and k1)

A bigint token is 26 lowercase Crockford base32 characters, alone or after a prefix and
"_" (TypeID style). The characters are one AES-256 block that holds the ID (8 bytes, big
endian), the ID of the key that made it (1 byte) and the first 7 bytes of HMAC-SHA256 of
the prefix under that key's prefix key: a token unmasks only with its own prefix, and a
changed character is refused (a forgery passes with a chance of 2^-64 per key). A sno token's
block is the sno's 10 bytes, the key's ID and 5 bytes of its own prefix MAC (2^-48 per key).
"""
import hashlib
import hmac
import re
import uuid

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

__all__ = ["Keyring", "InvalidToken", "KeyFileError"]

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base32, lowercase
_DIGIT = {c: i for i, c in enumerate(ALPHABET)}
TOKEN_BODY = 26
PREFIX_MAX = 63
_PREFIX = re.compile(r"[a-z](?:[a-z_]*[a-z])?\Z")

LABEL_BIGINT = b"snowflake mask bigint v1"
LABEL_ULID = b"snowflake mask ulid v1"
LABEL_SNO = b"snowflake mask sno v1"
LABEL_BIGINT_PREFIX = b"snowflake mask bigint prefix v1"
LABEL_SNO_PREFIX = b"snowflake mask sno prefix v1"
LABEL_UUIDV47 = b"snowflake mask uuidv47 v1"
LABEL_UUIDV7 = b"snowflake mask uuidv7 v1"

_U64 = (1 << 64) - 1
_U48 = (1 << 48) - 1


class InvalidToken(ValueError):
    """A token, façade or masked ULID that no key of the ring made (or not of the form)."""


class KeyFileError(ValueError):
    """A key file that is not of the form "ID HEX [active]" a line."""


def check_prefix(prefix):
    """Returns prefix if it is one a token may carry: empty, or [a-z] with inner
    underscores, at most 63 characters; raises ValueError otherwise."""
    if prefix == "":
        return prefix
    if not isinstance(prefix, str) or len(prefix) > PREFIX_MAX or not _PREFIX.match(prefix):
        raise ValueError(f"invalid token prefix {prefix!r}: lowercase letters a-z and inner "
                         f"underscores, at most {PREFIX_MAX} characters")
    return prefix


def _check(prefix_key, prefix, n):
    """The n bytes that bind a token to its prefix: HMAC-SHA256 under the key's prefix key
    of its kind (7 bytes in a bigint token, 5 in a sno token)."""
    return hmac.new(prefix_key, prefix.encode("ascii"), hashlib.sha256).digest()[:n]


def _base32(block):
    """A 16-byte block as 26 Crockford characters, most significant first (as a ULID)."""
    n = int.from_bytes(block, "big")
    return "".join(ALPHABET[(n >> (5 * i)) & 31] for i in range(TOKEN_BODY - 1, -1, -1))


def _unbase32(body):
    """26 Crockford characters (lowercase) as a 16-byte block, or None."""
    if len(body) != TOKEN_BODY or body[0] > "7":
        return None
    n = 0
    for c in body:
        d = _DIGIT.get(c)
        if d is None:
            return None
        n = (n << 5) | d
    return n.to_bytes(16, "big")


def _siphash24(key16, data):
    """SipHash-2-4 of data with a 16-byte key (k0, k1 little-endian), as an integer."""
    k0 = int.from_bytes(key16[:8], "little")
    k1 = int.from_bytes(key16[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & _U64

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & _U64
            v[2] = (v[2] + v[3]) & _U64
            v[1] = rotl(v[1], 13) ^ v[0]
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[1]) & _U64
            v[0] = (v[0] + v[3]) & _U64
            v[1] = rotl(v[1], 17) ^ v[2]
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = rotl(v[2], 32)

    whole = len(data) & ~7
    for i in range(0, whole, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = (len(data) << 56) & _U64 | int.from_bytes(data[whole:], "little")
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _facade_v7(b, version, key16):
    """uuidv7_mask()'s transform: SipHash of rand_b (the variant cleared; it stays as it is,
    so the same mask undoes it) masks the 48-bit time with its high 48 bits and rand_a with
    its low 12; then the version and the variant."""
    h = _siphash24(key16, bytes([b[8] & 0x3F]) + bytes(b[9:16]))
    out = bytearray(b)
    out[0:6] = (int.from_bytes(b[0:6], "big") ^ (h >> 16)).to_bytes(6, "big")
    rand_a = (((b[6] & 0x0F) << 8) | b[7]) ^ (h & 0xFFF)
    out[6] = (version << 4) | (rand_a >> 8)
    out[7] = rand_a & 0xFF
    out[8] = (out[8] & 0x3F) | 0x80
    return bytes(out)


def _facade(b, version, key16):
    """uuidv47's transform: the 48-bit time XORed with SipHash of the random bits (which
    stay as they are, so the same mask undoes it), then the version and the variant."""
    msg = bytes([b[6] & 0x0F, b[7], b[8] & 0x3F]) + bytes(b[9:16])
    mask = _siphash24(key16, msg) & _U48
    out = bytearray(b)
    out[0:6] = (int.from_bytes(b[0:6], "big") ^ mask).to_bytes(6, "big")
    out[6] = (out[6] & 0x0F) | (version << 4)
    out[8] = (out[8] & 0x3F) | 0x80
    return bytes(out)


class _Key:
    __slots__ = ("id", "bigint", "ulid", "sno", "uuidv47", "uuidv7", "bigint_prefix", "sno_prefix")

    def __init__(self, key_id, master):
        self.id = key_id
        self.bigint = Cipher(algorithms.AES(hmac.new(master, LABEL_BIGINT, hashlib.sha256).digest()),
                             modes.ECB())
        self.ulid = Cipher(algorithms.AES(hmac.new(master, LABEL_ULID, hashlib.sha256).digest()),
                           modes.ECB())
        self.sno = Cipher(algorithms.AES(hmac.new(master, LABEL_SNO, hashlib.sha256).digest()),
                          modes.ECB())
        self.uuidv47 = hmac.new(master, LABEL_UUIDV47, hashlib.sha256).digest()[:16]
        self.uuidv7 = hmac.new(master, LABEL_UUIDV7, hashlib.sha256).digest()[:16]
        self.bigint_prefix = hmac.new(master, LABEL_BIGINT_PREFIX, hashlib.sha256).digest()
        self.sno_prefix = hmac.new(master, LABEL_SNO_PREFIX, hashlib.sha256).digest()


def _encrypt(cipher, block):
    e = cipher.encryptor()
    return e.update(block) + e.finalize()


def _decrypt(cipher, block):
    d = cipher.decryptor()
    return d.update(block) + d.finalize()


# Keys the server refuses: all zeros, and the example the README printed before 1.0.0.
_REFUSED_KEYS = (bytes(32),
                 bytes.fromhex("6f3a1e0b9c2d4f5a7e8b1c3d5f7a9b0c2e4d6f8a1b3c5d7e9f0a2b4c6d8e0f1a"))


def parse_key_file(text):
    """The keys of a key file's text: ({id: 32-byte master key}, the active key's id)."""
    keys, active = {}, None
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"key file line {number}"
        if len(words) not in (2, 3) or (len(words) == 3 and words[2] != "active"):
            raise KeyFileError(f"{where}: expected \"ID HEX [active]\"")
        if not words[0].isdigit() or int(words[0]) > 255:
            raise KeyFileError(f"{where}: the key ID must be a number from 0 to 255")
        key_id = int(words[0])
        if not re.fullmatch(r"[0-9a-fA-F]{64}", words[1]):
            raise KeyFileError(f"{where}: the key must be 64 hex digits (32 bytes)")
        if key_id in keys:
            raise KeyFileError(f"{where}: key {key_id} appears twice")
        if bytes.fromhex(words[1]) in _REFUSED_KEYS:
            raise KeyFileError(f"{where}: this key is all zeros or the README's example")
        keys[key_id] = bytes.fromhex(words[1])
        if len(words) == 3:
            if active is not None:
                raise KeyFileError(f"{where}: a second active key (key {active} is active)")
            active = key_id
    if not keys:
        raise KeyFileError("the key file holds no key")
    if active is None:
        raise KeyFileError("no key is marked active")
    return keys, active


class Keyring:
    """The keys of one key file. Masking uses the active key (or the key_id given);
    unmasking a bigint token tries the active key first, then the others by ascending id,
    so that tokens made before a rotation still unmask."""

    def __init__(self, keys, active):
        """keys: {id 0..255: 32-byte master key}; active: the id of the key that masks."""
        if active not in keys:
            raise KeyFileError(f"the active key {active} is not among the keys")
        self._keys = {}
        for key_id, master in keys.items():
            if not 0 <= key_id <= 255 or len(master) != 32:
                raise KeyFileError(f"key {key_id}: an id from 0 to 255 and 32 bytes expected")
            self._keys[key_id] = _Key(key_id, bytes(master))
        self.active = active
        self.key_ids = sorted(self._keys)
        self._order = [self._keys[active]] + [self._keys[k] for k in sorted(self._keys)
                                              if k != active]

    @classmethod
    def from_text(cls, text):
        return cls(*parse_key_file(text))

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="ascii") as f:
            return cls.from_text(f.read())

    def _key(self, key_id):
        if key_id is None:
            return self._keys[self.active]
        try:
            return self._keys[key_id]
        except KeyError:
            raise ValueError(f"no key {key_id} in the key file") from None

    # bigint tokens

    def mask(self, value, prefix="", key_id=None):
        """The token of a bigint (a Python int from -2^63 to 2^63-1), as
        snowflake_mask(value, prefix) returns it. key_id picks a key other than the
        active one (the server masks with the active key)."""
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError(f"{value} is out of the range of bigint")
        check_prefix(prefix)
        key = self._key(key_id)
        block = ((value & _U64).to_bytes(8, "big") + bytes([key.id])
                 + _check(key.bigint_prefix, prefix, 7))
        body = _base32(_encrypt(key.bigint, block))
        return f"{prefix}_{body}" if prefix else body

    def unmask(self, token, prefix=""):
        """The bigint that a token holds, as snowflake_unmask(token[, prefix]) returns it.
        The token's case does not matter. The token must carry exactly prefix (none when
        not given). Raises InvalidToken for a token that no key made."""
        block = self._token_block(token, prefix)
        found = None
        for key in self._order:  # every key, as the server tries them
            plain = _decrypt(key.bigint, block)
            want = bytes([key.id]) + _check(key.bigint_prefix, prefix, 7)
            if hmac.compare_digest(plain[8:16], want) and found is None:
                found = int.from_bytes(plain[:8], "big", signed=True)
        if found is not None:
            return found
        raise InvalidToken("no key of the key file made this token (or its prefix differs)")

    # sno tokens: the same form, the block the sno's 10 bytes, the key id and 5 check bytes

    def sno_mask(self, sno, prefix="", key_id=None):
        """The token of a sno (its 10 bytes), as sno_mask(sno, prefix) returns it."""
        if not isinstance(sno, (bytes, bytearray)) or len(sno) != 10:
            raise ValueError("a sno is 10 bytes")
        check_prefix(prefix)
        key = self._key(key_id)
        block = bytes(sno) + bytes([key.id]) + _check(key.sno_prefix, prefix, 5)
        body = _base32(_encrypt(key.sno, block))
        return f"{prefix}_{body}" if prefix else body

    def sno_unmask(self, token, prefix=""):
        """The 10 bytes of the sno a token holds, as sno_unmask(token[, prefix]) returns it.
        Raises InvalidToken for a token that no key made, a bigint token among them."""
        block = self._token_block(token, prefix)
        found = None
        for key in self._order:
            plain = _decrypt(key.sno, block)
            want = bytes([key.id]) + _check(key.sno_prefix, prefix, 5)
            if hmac.compare_digest(plain[10:16], want) and found is None:
                found = plain[:10]
        if found is not None:
            return found
        raise InvalidToken("no key of the key file made this token (or its prefix differs)")

    def _token_block(self, token, prefix):
        """A token's 16-byte block; its prefix must be prefix."""
        if not isinstance(token, str):
            raise InvalidToken("a token is a string")
        token = token.lower()
        got, cut, body = token.rpartition("_")
        if got != prefix:
            raise InvalidToken(f"the token's prefix is {got!r}, not {prefix!r}")
        try:
            if cut and not got:
                raise ValueError("an underscore with no prefix before it")
            check_prefix(got)
        except ValueError as e:
            raise InvalidToken(str(e)) from None
        block = _unbase32(body)
        if block is None:
            raise InvalidToken("a token ends in 26 Crockford base32 characters, the first 0 to 7")
        return block

    # ULIDs: 16 bytes to 16 bytes

    def ulid_mask(self, ulid, key_id=None):
        """ulid_mask(): AES-256 of the ULID's 16 bytes. Takes and returns 16 bytes, or the
        26-character text (returned in uppercase, as the ulid type prints)."""
        return self._ulid(ulid, key_id, _encrypt)

    def ulid_unmask(self, ulid, key_id=None):
        """ulid_unmask(): the inverse of ulid_mask() with the same key. Every 16 bytes
        unmask to some ULID: a masked ULID carries no check."""
        return self._ulid(ulid, key_id, _decrypt)

    def _ulid(self, ulid, key_id, op):
        cipher = self._key(key_id).ulid
        if isinstance(ulid, str):
            block = _unbase32(ulid.lower())
            if block is None:
                raise ValueError(f"invalid ULID text {ulid!r}")
            return _base32(op(cipher, block)).upper()
        if len(ulid) != 16:
            raise ValueError("a ULID is 16 bytes")
        return op(cipher, bytes(ulid))

    # UUIDv7 façades

    @staticmethod
    def _uuid_in(u, name, version):
        b = u.bytes
        if b[6] >> 4 != version:
            raise ValueError(f"{name}() takes a version {version} UUID, not version {b[6] >> 4}")
        if b[8] >> 6 != 2:
            raise ValueError(f"{name}() takes an RFC 9562 UUID (variant bits 10)")
        return b

    def uuidv7_mask(self, u, key_id=None):
        """uuidv7_mask(): the UUIDv4-looking façade of a UUIDv7 (uuid.UUID in and out), its
        time and rand_a (snowflake_uuidv7()'s counter) hidden."""
        b = self._uuid_in(u, "uuidv7_mask", 7)
        return uuid.UUID(bytes=_facade_v7(b, 4, self._key(key_id).uuidv7))

    def uuidv7_unmask(self, u, key_id=None):
        """uuidv7_unmask(): the UUIDv7 behind a uuidv7_mask() façade."""
        b = self._uuid_in(u, "uuidv7_unmask", 4)
        return uuid.UUID(bytes=_facade_v7(b, 7, self._key(key_id).uuidv7))

    def uuidv47_mask(self, u, key_id=None):
        """uuidv47_mask(): uuidv47's façade, as its encode makes it with this key ring's
        derived key; rand_a passes through."""
        b = self._uuid_in(u, "uuidv47_mask", 7)
        return uuid.UUID(bytes=_facade(b, 4, self._key(key_id).uuidv47))

    def uuidv47_unmask(self, u, key_id=None):
        """uuidv47_unmask(): the UUIDv7 behind a façade, as uuidv47's decode gives it."""
        b = self._uuid_in(u, "uuidv47_unmask", 4)
        return uuid.UUID(bytes=_facade(b, 7, self._key(key_id).uuidv47))

    def uuidv47_key(self, key_id=None):
        """The derived key in uuidv47's own form (its uuid47.key setting): 32 hex digits."""
        return self._key(key_id).uuidv47.hex()
