// ID blocks in a JavaScript client: the next-ID rule of a block from snowflake_block(n), keys
// handed out from blocks to concurrent callers, and a COPY whose keys come from blocks
// (docs/applications.md, "ID blocks", shows this module).
'use strict'
const { Readable } = require('node:stream')
const { pipeline } = require('node:stream/promises')
const { from: copyFrom } = require('pg-copy-streams')

// Every ID of the block (first, last, count) that snowflake_block() returned (BigInt, or the
// strings pg returns), in order.
function* blockIds(first, last, count) {
  first = BigInt(first)
  last = BigInt(last)
  count = BigInt(count)
  const shard = first & (0x1fffn << 10n)
  const span = (((last >> 23n) - (first >> 23n)) << 10n) + (last & 0x3ffn) - (first & 0x3ffn)
  // As snowflake_block_ids(): IDs are positive bigints, a block is on one shard, of 1 to
  // 1,048,576 IDs; and it holds count IDs, so that the ends of two blocks are refused.
  if (first < 0n || last < first || last >= 1n << 63n || (last & (0x1fffn << 10n)) !== shard ||
      span + 1n !== count || count > 1n << 20n) throw new RangeError('not a block')
  for (let id = first; ; id = (id & 0x3ffn) !== 0x3ffn ? id + 1n : (((id >> 23n) + 1n) << 23n) | shard) {
    yield id
    if (id === last) return
  }
}

// Keys from blocks of size (more when a request needs more, largest at most: 102,401 at the
// default snowflake.block_max_lead) for every caller of a process: take(n) resolves to the
// row (first, last, count) of snowflake_block(n). A block's IDs that are not handed out are
// kept, not dropped; one block is taken at a time, and callers wait in turn.
class IdBlocks {
  constructor(take, size = 1000, largest = 102401) {
    this.take = take
    this.size = size
    this.largest = largest
    this.ids = [].values() // the current block's IDs not yet handed out
    this.turn = Promise.resolve()
  }

  async nextId() {
    return (await this.nextIds(1))[0]
  }

  // count IDs (BigInt), in order; calls are served one at a time, in the order made. On an
  // error, the IDs gathered for that call are dropped (a gap, never a duplicate).
  nextIds(count) {
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new RangeError(`${count} IDs`))
    const call = this.turn.then(async () => {
      const ids = []
      while (ids.length < count) {
        const { value, done } = this.ids.next()
        if (!done) {
          ids.push(value)
          continue
        }
        const n = Math.min(Math.max(this.size, count - ids.length), this.largest)
        const b = await this.take(n)
        if (Number(b.count) !== n) throw new RangeError(`${b.count} IDs, not a block of ${n}`)
        this.ids = blockIds(b.first, b.last, b.count)
      }
      return ids
    })
    this.turn = call.catch(() => {})
    return call
  }
}

// COPY count rows (arrays of plain text or numbers) into table (id, ...columns), their keys
// from blocks of blockSize taken in one query before the COPY starts.
async function copyWithBlocks(client, table, columns, rows, count, blockSize = 10000) {
  const { rows: blocks } = await client.query(
    'SELECT b.first, b.last, b.count FROM generate_series(0, $1 - 1) g, LATERAL snowflake_block(least($2, $3 - g * $2)) b',
    [Math.ceil(count / blockSize), blockSize, count])
  const ids = (function* () { for (const b of blocks) yield* blockIds(b.first, b.last, b.count) })()
  async function* lines() {
    let chunk = ''
    for (const row of rows) {
      chunk += ids.next().value + '\t' + row.join('\t') + '\n'
      if (chunk.length >= 1 << 16) { yield chunk; chunk = '' }
    }
    if (chunk) yield chunk
  }
  const copy = client.query(copyFrom(`COPY ${table} (id, ${columns.join(', ')}) FROM STDIN`))
  await pipeline(Readable.from(lines()), copy)
  return copy.rowCount
}

module.exports = { blockIds, IdBlocks, copyWithBlocks }
