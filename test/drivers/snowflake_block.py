"""ID blocks in a Python client: the next-ID rule of a block from snowflake_block(n), and keys
handed out from blocks (docs/applications.md, "ID blocks", shows this module)."""
import itertools


def block_ids(first, last):
    """Every ID of the block from first to last, in order."""
    shard = first & (0x1FFF << 10)
    span = (((last >> 23) - (first >> 23)) << 10) + (last & 0x3FF) - (first & 0x3FF)
    # As snowflake_block_ids(): IDs are positive bigints, a block is on one shard, of 1 to
    # 1,048,576 IDs.
    if not 0 <= first <= last < 1 << 63 or last & (0x1FFF << 10) != shard or span >= 1 << 20:
        raise ValueError(f"{first}, {last} are not the ends of a block")
    id = first
    while True:  # a millisecond's sequences, then sequence 0 of the next millisecond
        end = min(id | 0x3FF, last)
        yield from range(id, end + 1)
        if end == last:
            return
        id = ((id >> 23) + 1) << 23 | shard


class IdBlocks:
    """Keys from blocks of size: take(n) returns (first, last) of snowflake_block(n)."""

    def __init__(self, take, size=1000):
        self.take, self.size, self.ids = take, size, iter(())

    def next_id(self):
        for id in self.ids:
            return id
        self.ids = block_ids(*self.take(self.size))
        return next(self.ids)

    def next_ids(self, count):
        ids = list(itertools.islice(self.ids, count))
        while len(ids) < count:
            self.ids = block_ids(*self.take(self.size))
            ids += itertools.islice(self.ids, count - len(ids))
        return ids
