// Keys from the snowflake extension's ID blocks for every caller of a Node.js process: the
// next-ID rule of a block from snowflake_block(n), keys handed out from blocks to concurrent
// callers, and a COPY whose keys come from blocks. See README.md beside this file.
'use strict'
const { Readable } = require('node:stream')
const { pipeline } = require('node:stream/promises')
const { from: copyFrom } = require('pg-copy-streams')

// The largest block a role takes at the default snowflake.block_max_lead (100 ms).
const LARGEST = 102401

// Every ID of the block (first, last, count) that snowflake_block() returned, in order.
// first, last: BigInt, or the strings pg returns for bigint; count: a number, BigInt or
// string (1 to 1,048,576). Returns an iterator of count BigInts, ascending: within a
// millisecond the next sequence (the low 10 bits) up to 1023, then sequence 0 of the next
// millisecond (bits 23 up), the shard (bits 10 to 22) unchanged; the IDs of the server's
// snowflake_block_ids(first, last). Throws RangeError, at the first next(), when the three
// are not a block (an ID out of 0 to 2^63 - 1, last below first, two shards, more than
// 1,048,576 IDs, or a count other than the IDs from first to last: the ends of two blocks),
// and SyntaxError for a string that is not an integer.
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

// Keys from snowflake_block() blocks for every caller of a process. take(n) (n a number)
// resolves to the row {first, last, count} of snowflake_block(n) (takeFrom(pool) makes one);
// size (a number, default 1,000) is the IDs of a block taken when the current one runs out;
// a request that needs more takes a block of what is missing, at most largest (default
// LARGEST, 102,401: the largest block at the default snowflake.block_max_lead). Safe for
// concurrent async callers: calls are served one at a time, in the order made, so one block
// is taken at a time and each call's IDs are ascending. A block's IDs that are not handed out
// are kept for the next call, not dropped; those of the last block are lost when the process
// ends (a gap, never a duplicate).
class IdBlocks {
  constructor(take, size = 1000, largest = LARGEST) {
    this.take = take
    this.size = size
    this.largest = largest
    this.ids = [].values() // the current block's IDs not yet handed out
    this.turn = Promise.resolve()
  }

  // Resolves to one ID (a BigInt), above every ID handed out before; rejects as nextIds().
  async nextId() {
    return (await this.nextIds(1))[0]
  }

  // Resolves to count (a safe integer, 0 or more) IDs, an array of BigInts in ascending
  // order, taking blocks as needed: a request of any size is served. Rejects with RangeError
  // for a count that is not a non-negative safe integer, or when take resolves to a row that
  // is not a block of the n IDs asked for; and with whatever take rejects with (pg's
  // DatabaseError: code 22023 for a block past the lead bound). On an error, the IDs gathered
  // for that call are dropped (a gap, never a duplicate), and the next call is served.
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

// A take function for IdBlocks: snowflake_block(n) through queryable, a pg.Pool (a
// connection of the pool a block) or a pg.Client that IdBlocks alone uses. Resolves to the
// row {first, last, count}, first and last as strings (pg's bigint), count a number; rejects
// with pg's DatabaseError (code 22023 for a block past the lead bound, 42883 without the
// extension).
function takeFrom(queryable) {
  return async (n) =>
    (await queryable.query('SELECT first, last, count FROM snowflake_block($1)', [n])).rows[0]
}

// COPY count rows (arrays of plain text or numbers, written as their text) into table (id,
// ...columns), their keys from blocks of blockSize (a number, at most what the role's
// snowflake.block_max_lead allows) taken in one query before the COPY starts. client: a
// pg.Client (or a pool's client) that nothing else uses meanwhile; table and columns are SQL
// as written (quote them yourself); rows an iterable of at most count rows. Resolves to the
// number of rows copied; rejects with pg's DatabaseError from the blocks' query or the COPY,
// and with RangeError when rows holds more than count rows (the COPY then stores nothing).
async function copyWithBlocks(client, table, columns, rows, count, blockSize = 10000) {
  const { rows: blocks } = await client.query(
    'SELECT b.first, b.last, b.count FROM generate_series(0, $1 - 1) g, LATERAL snowflake_block(least($2, $3 - g * $2)) b',
    [Math.ceil(count / blockSize), blockSize, count])
  const ids = (function* () { for (const b of blocks) yield* blockIds(b.first, b.last, b.count) })()
  async function* lines() {
    let chunk = ''
    for (const row of rows) {
      const { value: id, done } = ids.next()
      if (done) throw new RangeError(`more than ${count} rows`)
      chunk += id + '\t' + row.join('\t') + '\n'
      if (chunk.length >= 1 << 16) { yield chunk; chunk = '' }
    }
    if (chunk) yield chunk
  }
  const copy = client.query(copyFrom(`COPY ${table} (id, ${columns.join(', ')}) FROM STDIN`))
  await pipeline(Readable.from(lines()), copy)
  return copy.rowCount
}

module.exports = { LARGEST, blockIds, IdBlocks, takeFrom, copyWithBlocks }
