"""Keys from the snowflake extension's ID blocks for every thread of a Python process.

snowflake_block(n) reserves the next n IDs of the server's stream in one call and returns the
block as (first, last, count); block_ids() expands it by the block's rule, and IdBlocks hands
the IDs out to the threads of a process, taking a block when the one it holds runs out.
See README.md beside this module.
"""
import itertools
import threading

__all__ = ["LARGEST", "block_ids", "IdBlocks", "take_from"]

# The largest block a role takes at the default snowflake.block_max_lead (100 ms).
LARGEST = 102401

_SHARD_BITS = 0x1FFF << 10


def block_ids(first, last, count):
    """Every ID of the block (first, last, count) that snowflake_block() returned, in order.

    first, last: int, the block's first and last IDs (positive bigints); count: int, the
    number of IDs it holds (1 to 1,048,576). Returns an iterator of count ints, ascending:
    within a millisecond the next sequence (the low 10 bits) up to 1023, then sequence 0 of
    the next millisecond (bits 23 up), the shard (bits 10 to 22) unchanged; the same IDs as
    the server's snowflake_block_ids(first, last).

    Raises ValueError, at the call, when the three are not a block: an ID out of 0 to
    2**63 - 1, last below first, two shards, more than 1,048,576 IDs, or a count other than
    the IDs from first to last (so the ends of two different blocks are refused).
    """
    shard = first & _SHARD_BITS
    span = (((last >> 23) - (first >> 23)) << 10) + (last & 0x3FF) - (first & 0x3FF)
    # As snowflake_block_ids(): IDs are positive bigints, a block is on one shard, of 1 to
    # 1,048,576 IDs; and it holds count IDs, so that the ends of two blocks are refused.
    if (not 0 <= first <= last < 1 << 63 or last & _SHARD_BITS != shard
            or span + 1 != count or count > 1 << 20):
        raise ValueError(f"{first}, {last}, {count} are not a block")
    return _expand(first, last, shard)


def _expand(first, last, shard):
    id = first
    while True:  # a millisecond's sequences, then sequence 0 of the next millisecond
        end = min(id | 0x3FF, last)
        yield from range(id, end + 1)
        if end == last:
            return
        id = ((id >> 23) + 1) << 23 | shard


def take_from(conn):
    """A take function for IdBlocks that runs snowflake_block(n) on conn.

    conn: a DB-API connection of psycopg 3 or psycopg2 that nothing else uses (IdBlocks calls
    take under its lock, so one thread at a time uses it). When conn is not in autocommit
    mode, each block's transaction is committed after it is read. The function returned
    takes n (int, 1 to 102,401 at the default snowflake.block_max_lead) and returns the row
    (first, last, count) as three ints. It raises what the driver raises: a block past the
    lead bound is SQLSTATE 22023, n out of 1 to 1,048,576 is 22003 or 22023, and a server
    without the extension 42883.
    """
    def take(n):
        with conn.cursor() as cur:
            cur.execute("SELECT first, last, count FROM snowflake_block(%s)", (n,))
            row = cur.fetchone()
        if not getattr(conn, "autocommit", True):
            conn.commit()
        return row

    return take


class IdBlocks:
    """Keys from snowflake_block() blocks, for every thread of a process.

    take: a callable that takes n (int) and returns the row (first, last, count) of
    snowflake_block(n), three ints (take_from(conn) makes one). size: int, the IDs of a block
    taken when the current one runs out (default 1,000); a request that needs more takes a
    block of what is missing, at most largest (int, default LARGEST, 102,401, the largest
    block at the default snowflake.block_max_lead; raise it with the setting).

    Thread-safe: one lock serves every call, so one block is taken at a time and the other
    callers wait for it, and each call's IDs are ascending. A block's IDs that are not handed
    out are kept for the next call, not dropped; those of the last block are lost when the
    process ends (a gap, never a duplicate).
    """

    def __init__(self, take, size=1000, largest=LARGEST):
        self.take, self.size, self.largest, self.ids = take, size, largest, iter(())
        self.lock = threading.Lock()

    def next_id(self):
        """One ID (int), above every ID this allocator handed out before. Raises as
        next_ids() does."""
        return self.next_ids(1)[0]

    def next_ids(self, count):
        """count (int, 0 or more) IDs, a list of ints in ascending order, taking blocks as
        needed: a request of any size is served.

        Raises ValueError for a count that is not a non-negative int, or when take returns a
        row that is not a block of the n IDs asked for; and whatever take raises (the
        driver's error). On an error the IDs gathered for this call are dropped: a gap,
        never a duplicate.
        """
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"{count!r} IDs asked for")
        with self.lock:
            ids = list(itertools.islice(self.ids, count))
            while len(ids) < count:
                # A block of what is missing when that is more than size.
                n = min(max(self.size, count - len(ids)), self.largest)
                first, last, got = self.take(n)
                if got != n:
                    raise ValueError(f"{got} IDs, not a block of {n}")
                self.ids = block_ids(first, last, got)
                ids += itertools.islice(self.ids, count - len(ids))
            return ids
