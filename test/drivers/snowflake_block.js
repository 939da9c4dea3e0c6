// ID blocks in a JavaScript client: the next-ID rule of a block from snowflake_block(n), and a
// COPY whose keys come from blocks (docs/applications.md, "ID blocks", shows this module).
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

module.exports = { blockIds, copyWithBlocks }
