"""ID blocks in a Python client: the next-ID rule of a block from snowflake_block(n), and keys
handed out from blocks (docs/applications.md, "ID blocks", shows this module)."""
import itertools
import threading


def block_ids(first, last, count):
    """Every ID of the block (first, last, count) that snowflake_block() returned, in order."""
    shard = first & (0x1FFF << 10)
    span = (((last >> 23) - (first >> 23)) << 10) + (last & 0x3FF) - (first & 0x3FF)
    # As snowflake_block_ids(): IDs are positive bigints, a block is on one shard, of 1 to
    # 1,048,576 IDs; and it holds count IDs, so that the ends of two blocks are refused.
    if (not 0 <= first <= last < 1 << 63 or last & (0x1FFF << 10) != shard
            or span + 1 != count or count > 1 << 20):
        raise ValueError(f"{first}, {last}, {count} are not a block")
    id = first
    while True:  # a millisecond's sequences, then sequence 0 of the next millisecond
        end = min(id | 0x3FF, last)
        yield from range(id, end + 1)
        if end == last:
            return
        id = ((id >> 23) + 1) << 23 | shard


class IdBlocks:
    """Keys from blocks of size (more when a request needs more, largest at most: 102,401 at
    the default snowflake.block_max_lead), for every thread of a process: take(n) returns
    (first, last, count) of snowflake_block(n). A block's IDs that are not handed out are
    kept, not dropped; one block is taken at a time, and callers wait for it."""

    def __init__(self, take, size=1000, largest=102401):
        self.take, self.size, self.largest, self.ids = take, size, largest, iter(())
        self.lock = threading.Lock()

    def next_id(self):
        return self.next_ids(1)[0]

    def next_ids(self, count):
        with self.lock:
            ids = list(itertools.islice(self.ids, count))
            while len(ids) < count:
                # A block of what is missing when that is more than size.
                n = min(max(self.size, count - len(ids)), self.largest)
                self.ids = block_ids(*self.take(n))
                ids += itertools.islice(self.ids, count - len(ids))
            return ids
