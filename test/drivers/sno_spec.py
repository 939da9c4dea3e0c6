"""sno, as its published specification describes it (github.com/muyo/sno, README: Layout,
Time and sequence, Epoch, Encoding), written for the tests from that text alone: it shares no
code with the server's codec (src/core/sno_codec.cpp) and imports no sno library.

- 80 bits in two 40-bit blocks, big-endian in every representation:
  the timestamp block: 39 bits of milliseconds since the epoch at a 4 ms resolution
  (floored), then the tick-tock bit (the block's least significant bit);
  the payload block: the metabyte (8 bits), the partition (16 bits), the sequence (16 bits).
- The epoch: 2010-01-01 00:00:00 UTC (1262304000 s after Unix's); the last time a sno holds
  is 2079-09-07 15:47:35.548 UTC.
- Text: a base32 of the alphabet below, 5 bits a character from the most significant end:
  16 characters, canonically [2-9a-x]{16}.
"""
import re

ALPHABET = "23456789abcdefghijklmnopqrstuvwx"
CANONICAL = re.compile(r"[2-9a-x]{16}\Z")
EPOCH_UNIX_MS = 1262304000 * 1000
UNIT_MS = 4
MAX_UNITS = (1 << 39) - 1
LAST_UNIX_MS = EPOCH_UNIX_MS + MAX_UNITS * UNIT_MS  # 2079-09-07 15:47:35.548 UTC

# The specification's own worked examples (its encoding tests: text and the 10 bytes).
KNOWN_ANSWERS = [
    ("2222222222222222", bytes(10)),
    ("brpk4q72xwf2m63l", bytes([78, 111, 33, 96, 160, 255, 154, 10, 16, 51])),
    ("xxxxxxxxxxxxxxxx", bytes([255] * 10)),
]


def encode(b):
    """The 16-character text of 10 bytes."""
    if len(b) != 10:
        raise ValueError("a sno is 10 bytes, not %d" % len(b))
    n = int.from_bytes(b, "big")
    return "".join(ALPHABET[(n >> (5 * i)) & 31] for i in range(15, -1, -1))


def decode(text):
    """The 10 bytes of a canonical text; ValueError for anything else."""
    if not CANONICAL.match(text):
        raise ValueError("not a canonical sno: %r" % (text,))
    n = 0
    for c in text:
        n = (n << 5) | ALPHABET.index(c)
    return n.to_bytes(10, "big")


def compose(units, tick, meta, partition, sequence):
    """The 10 bytes of the fields: units of 4 ms since the epoch, the tick-tock bit, the
    metabyte, the partition and the sequence."""
    if not (0 <= units <= MAX_UNITS and 0 <= meta < 256 and 0 <= partition < 65536
            and 0 <= sequence < 65536):
        raise ValueError("a field out of its range")
    timestamp = (units << 1) | (1 if tick else 0)
    payload = (meta << 32) | (partition << 16) | sequence
    return ((timestamp << 40) | payload).to_bytes(10, "big")


def fields(b):
    """(units, tick, meta, partition, sequence) of 10 bytes."""
    n = int.from_bytes(b, "big")
    timestamp, payload = n >> 40, n & ((1 << 40) - 1)
    return (timestamp >> 1, bool(timestamp & 1), payload >> 32, (payload >> 16) & 0xFFFF,
            payload & 0xFFFF)


def unix_ms(units):
    """The Unix time in milliseconds of a number of 4 ms units."""
    return EPOCH_UNIX_MS + units * UNIT_MS


def units_of(unix_ms_value):
    """The 4 ms unit (floored) that holds a Unix time in milliseconds."""
    return (unix_ms_value - EPOCH_UNIX_MS) // UNIT_MS
