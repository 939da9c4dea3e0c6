"""ID blocks in a Python client: the next-ID rule of a block from snowflake_block(n), and keys
handed out from blocks (docs/applications.md, "ID blocks", shows this module)."""


def block_ids(first, last):
    """Every ID of the block from first to last, in order."""
    shard = first & (0x1FFF << 10)
    if last < first or last & (0x1FFF << 10) != shard:
        raise ValueError(f"{first}, {last} are not the ends of a block")
    id = first
    while True:
        yield id
        if id == last:
            return
        id = id + 1 if id & 0x3FF != 0x3FF else ((id >> 23) + 1) << 23 | shard


class IdBlocks:
    """Keys from blocks of size: take(n) returns (first, last) of snowflake_block(n)."""

    def __init__(self, take, size=1000):
        self.take, self.size, self.ids = take, size, iter(())

    def next_id(self):
        for id in self.ids:
            return id
        self.ids = block_ids(*self.take(self.size))
        return next(self.ids)
