// ID blocks through node-postgres, with the JavaScript client package (clients/js) as npm
// installed it into node_modules (package.json's file: dependency, packed: .npmrc): the
// package is that copy, of clients/js's version; its rule gives exactly snowflake_block_ids()
// for blocks of 1 to 1,048,576 IDs; IdBlocks shared by 50 concurrent callers hands out no key
// twice and only keys of blocks the server returned; a COPY of 1,000,000 rows whose keys come
// from blocks, while another session inserts DEFAULT snowflake() rows, gives no duplicate; and
// the README's examples run. Run: node --test blocks.test.js
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const pg = require('pg')
const { LARGEST, blockIds, IdBlocks, takeFrom, copyWithBlocks } = require('snowflake-block')

const CLIENT = path.join(__dirname, '..', '..', 'clients', 'js')

const SHARD = BigInt(process.env.SNOWFLAKE_TEST_SHARD)
const SIZES = [1, 2, 1023, 1024, 1025, 3000, 65536, 1048576]

let client

before(async () => {
  client = new pg.Client()
  await client.connect()
  // Blocks of up to 1,048,576 IDs: a trusted role's bound (a superuser's session).
  await client.query("SET snowflake.block_max_lead = '1024ms'")
})

after(async () => {
  await client.end()
})

test('the installed package, not its source folder', () => {
  const installed = path.join(__dirname, 'node_modules', 'snowflake-block')
  assert.equal(fs.lstatSync(installed).isSymbolicLink(), false, 'node_modules links to the source')
  assert.equal(require.resolve('snowflake-block'), path.join(installed, 'index.js'))
  const source = JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8'))
  const copy = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'))
  assert.equal(copy.version, source.version)
  assert.equal(fs.readFileSync(path.join(installed, 'index.js'), 'utf8'),
    fs.readFileSync(path.join(CLIENT, 'index.js'), 'utf8'), 'installed from an older clients/js')
})

test('the README examples run', async () => {
  const code = [...fs.readFileSync(path.join(CLIENT, 'README.md'), 'utf8')
    .matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1])
  assert.equal(code.length, 2)
  await client.query('DROP TABLE IF EXISTS events')
  // The blocks, in order, as the body of one async function (the README's "in an async
  // function"), which returns what the test checks.
  const AsyncFunction = (async () => {}).constructor
  const { orderId, lineIds, copied } = await new AsyncFunction('require',
    code.join('\n') + '\nreturn { orderId, lineIds, copied }')(require)
  assert.equal(typeof orderId, 'bigint')
  assert.equal(lineIds.length, 3)
  assert.ok(orderId < lineIds[0] && lineIds[0] < lineIds[1] && lineIds[1] < lineIds[2])
  const { rows: [r] } = await client.query('SELECT count(*)::int AS n, count(DISTINCT id)::int AS d FROM events')
  assert.deepEqual([copied, r.n, r.d], [50000, 50000, 50000])
  await client.query('DROP TABLE events')
})

test('the client rule gives the IDs of snowflake_block_ids()', async () => {
  // Blocks past 102,401 IDs need a lead bound above the default (a superuser's setting).
  await client.query("SET snowflake.block_max_lead = '1024ms'")
  for (const n of SIZES) {
    const { rows: [b] } = await client.query('SELECT first, last, count FROM snowflake_block($1)', [n])
    assert.equal(b.count, n)
    assert.equal((BigInt(b.first) >> 10n) & 0x1fffn, SHARD)
    const server = await client.query({
      text: 'SELECT array_agg(id ORDER BY ord)::text FROM snowflake_block_ids($1, $2) WITH ORDINALITY AS t(id, ord)',
      values: [b.first, b.last],
    })
    const client_ = [...blockIds(b.first, b.last, b.count)]
    assert.equal(client_.length, n)
    assert.equal('{' + client_.join(',') + '}', server.rows[0].array_agg, `a block of ${n}`)
  }
  assert.throws(() => [...blockIds(5n << 23n, 4n << 23n, 1)], RangeError)
  // The first of one block and the last of another are not a block.
  const { rows: [a] } = await client.query('SELECT first, last, count FROM snowflake_block(100)')
  await client.query('SELECT snowflake_block(5000)')
  const { rows: [c] } = await client.query('SELECT first, last, count FROM snowflake_block(100)')
  assert.throws(() => blockIds(a.first, c.last, a.count).next(), RangeError)
  await client.query('RESET snowflake.block_max_lead')
})

test('the client rule refuses the pairs that snowflake_block_ids() refuses', async () => {
  const ms = 1n << 30n
  const bad = [[ms << 23n, (ms + 1024n) << 23n], [(ms << 23n) | 5n, ((ms + 1024n) << 23n) | 5n],
    [-1n, 5n], [-(1n << 40n), ms << 23n], [(ms << 23n) | 1n, ms << 23n],
    [(ms << 23n) | (1n << 10n), (ms << 23n) | (2n << 10n)]]
  for (const [first, last] of bad) {
    await assert.rejects(
      client.query('SELECT count(*) FROM snowflake_block_ids($1, $2)', [String(first), String(last)]),
      (e) => e.code === '22023' || e.code === '22003')
    assert.throws(() => blockIds(first, last, 1n << 20n).next(), RangeError, `${first}, ${last}`)
  }
  let count = 0
  for (const _ of blockIds(ms << 23n, ((ms + 1023n) << 23n) | 1023n, 1n << 20n)) count++
  assert.equal(count, 1 << 20)
})

test('one IdBlocks for 50 concurrent callers, empty and huge requests', async () => {
  const pool = new pg.Pool({ max: 4 })
  const taken = []
  let taking = 0
  let most = 0
  const take = takeFrom(pool)
  const keys = new IdBlocks(async (n) => {
    most = Math.max(most, ++taking)
    try {
      const b = await take(n)
      taken.push(b)
      return b
    } finally {
      taking--
    }
  }, 1000)
  let got
  try {
    got = await Promise.all(Array.from({ length: 50 }, async () => {
      const mine = []
      for (let k = 0; k < 60; k++) mine.push(...(k % 3 ? await keys.nextIds(k % 7) : [await keys.nextId()]))
      return mine
    }))
    assert.deepEqual(await keys.nextIds(0), [])
    await assert.rejects(keys.nextIds(-1), RangeError)
    got.push(await keys.nextIds(250000)) // more than the largest block, 102,401
    // A failed block fails its call alone: the next call is served.
    let fail = true
    const flaky = new IdBlocks((n) => fail ? Promise.reject(new Error('no block')) : keys.take(n), 10)
    await assert.rejects(flaky.nextId(), /no block/)
    fail = false
    assert.equal((await flaky.nextIds(3)).length, 3)
    // A row that is not the block asked for; past the lead bound, the server's 22023 as is.
    await assert.rejects(new IdBlocks((n) => take(n - 1), 10).nextId(), /9 IDs, not a block of 10/)
    await assert.rejects(new IdBlocks(take, LARGEST + 1, LARGEST + 1).nextId(), (e) => e.code === '22023')
  } finally {
    await pool.end()
  }
  const reserved = new Set()
  for (const b of taken) {
    const { rows } = await client.query('SELECT snowflake_block_ids($1, $2)::text AS id', [b.first, b.last])
    for (const r of rows) reserved.add(BigInt(r.id))
  }
  const handed = got.flat()
  let each = 0
  for (let k = 0; k < 60; k++) each += k % 3 ? k % 7 : 1
  assert.equal(handed.length, 50 * each + 250000)
  assert.equal(new Set(handed).size, handed.length, 'no key twice')
  assert.equal(handed.filter((id) => !reserved.has(id)).length, 0, 'every key in a block the server returned')
  assert.ok(reserved.size - handed.length < 102401, 'nothing dropped but the last block\'s rest')
  for (const mine of got) assert.ok(mine.every((id, i) => i === 0 || mine[i - 1] < id), 'in order')
  assert.equal(most, 1, 'one block taken at a time')
  console.log(`# ${handed.length} keys to 50 callers and one of 250,000 from ${taken.length} blocks: ` +
    `0 duplicates, 0 outside the blocks, ${reserved.size - handed.length} left in the last`)
})

test('COPY of 1,000,000 rows with keys from blocks beside DEFAULT snowflake() rows', async () => {
  await client.query(`DROP TABLE IF EXISTS copy_rows;
    CREATE TABLE copy_rows (id bigint PRIMARY KEY DEFAULT snowflake(), src text NOT NULL)`)
  const other = new pg.Client()
  await other.connect()
  let stop = false
  const defaults = (async () => {
    while (!stop) await other.query("INSERT INTO copy_rows (src) SELECT 'default' FROM generate_series(1, 1000)")
  })()
  const rows = (function* () { for (let i = 0; i < 1000000; i++) yield ['block'] })()
  let copied
  try {
    copied = await copyWithBlocks(client, 'copy_rows', ['src'], rows, 1000000, 10000)
  } finally {
    stop = true
    await defaults
    await other.end()
  }
  assert.equal(copied, 1000000)
  const { rows: [r] } = await client.query(`SELECT count(*)::int AS n, count(DISTINCT id)::int AS d,
    count(*) FILTER (WHERE src = 'default')::int AS defaults FROM copy_rows`)
  assert.equal(r.n, r.d)
  assert.equal(r.n - r.defaults, 1000000)
  assert.ok(r.defaults > 0)
  // More rows than keys: RangeError, and the COPY stores none of them.
  const more = (function* () { for (let i = 0; i < 1001; i++) yield ['extra'] })()
  await assert.rejects(copyWithBlocks(client, 'copy_rows', ['src'], more, 1000, 100), RangeError)
  const { rows: [x] } = await client.query("SELECT count(*)::int AS n FROM copy_rows WHERE src = 'extra'")
  assert.equal(x.n, 0)
  await client.query('DROP TABLE copy_rows')
})
