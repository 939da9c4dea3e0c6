// node-postgres (pg 8): every kind read and written exactly, in text and in binary result
// format, and what JSON.parse does with an ID as a JSON number. Run: node --test pg.test.js
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const pg = require('pg')

const ROWS = 200
const SHARD = BigInt(process.env.SNOWFLAKE_TEST_SHARD)
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const UUID_OID = 2950

let client
let ref
let ulidOid

// A ULID's 128 bits from its 26 Crockford base32 digits.
function ulidBig(text) {
  assert.equal(text.length, 26)
  let n = 0n
  for (const c of text) {
    const d = CROCKFORD.indexOf(c)
    assert.ok(d >= 0, text)
    n = n * 32n + BigInt(d)
  }
  return n
}

const uuidBig = (u) => BigInt('0x' + u.replaceAll('-', ''))

before(async () => {
  client = new pg.Client() // PGHOST, PGPORT, PGUSER, PGDATABASE from the runner
  await client.connect()
  await client.query(fs.readFileSync(path.join(__dirname, 'fixture.sql'), 'utf8'))
  ref = (await client.query('SELECT * FROM reference ORDER BY k')).rows
  ulidOid = (await client.query("SELECT 'ulid'::regtype::oid AS oid")).rows[0].oid
  assert.equal(ref.length, ROWS)
})

after(async () => {
  await client.end()
})

// rows: {k, sf, u, l} in k order; sf and u as pg returned them, l turned by ulidValue into
// its 128 bits.
function checkRows(rows, ulidValue) {
  assert.equal(rows.length, ROWS)
  rows.forEach((row, i) => {
    const r = ref[i]
    assert.equal(row.k, r.k)
    // bigint: a string, exact; BigInt for arithmetic; far above 2^53
    assert.equal(typeof row.sf, 'string')
    assert.equal(row.sf, r.sf_text)
    const sf = BigInt(row.sf)
    assert.ok(sf > 2n ** 53n)
    assert.equal(Number.isSafeInteger(Number(row.sf)), false)
    assert.equal((sf >> 23n) + BigInt(r.epoch_ms), BigInt(r.sf_ms))
    assert.equal((sf >> 10n) & 0x1fffn, BigInt(r.sf_shard))
    assert.equal(sf & 0x3ffn, BigInt(r.sf_seq))
    assert.equal(BigInt(r.sf_shard), SHARD)
    // uuid: 48 bits of Unix milliseconds on top
    assert.equal(typeof row.u, 'string')
    assert.equal(row.u, r.u_text)
    assert.equal(uuidBig(row.u) >> 80n, BigInt(r.u_ms))
    // ulid: the same 128 bits as the server's
    const l = ulidValue(row.l)
    assert.equal(l.toString(16).padStart(32, '0'), r.l_hex)
    assert.equal(l >> 80n, BigInt(r.l_ms))
  })
  // issue order is the order of each kind's values in JavaScript
  const increasing = (xs) => xs.every((x, i) => i === 0 || xs[i - 1] < x)
  assert.ok(increasing(rows.map((r) => BigInt(r.sf))))
  assert.ok(increasing(rows.map((r) => r.u))) // lower-case hex strings sort as the bytes
  assert.ok(increasing(rows.map((r) => ulidValue(r.l))))
}

async function checkBack() {
  const same = await client.query(`SELECT count(*)::int AS n FROM ids JOIN back USING (k)
    WHERE ids.sf = back.sf AND ids.u = back.u AND ids.l = back.l`)
  assert.equal(same.rows[0].n, ROWS)
  for (const col of ['sf', 'u', 'l']) {
    const r = await client.query(
      `SELECT array_agg(k ORDER BY ${col}) = array_agg(k ORDER BY k) AS ok FROM back`)
    assert.equal(r.rows[0].ok, true, col)
  }
  await client.query('TRUNCATE back')
}

test('text: bigint, uuid and ulid arrive as strings, exact', async () => {
  const res = await client.query('SELECT k, sf, u, l FROM ids ORDER BY k')
  assert.equal(typeof res.rows[0].l, 'string')
  checkRows(res.rows, ulidBig)
  for (const r of res.rows) {
    await client.query('INSERT INTO back VALUES ($1, $2, $3, $4)', [r.k, r.sf, r.u, r.l])
  }
  await checkBack()
  // A BigInt parameter is sent as its decimal text: exact too.
  const r0 = res.rows[0]
  const b = await client.query('SELECT $1::bigint = sf AS ok FROM ids WHERE k = 1', [BigInt(r0.sf)])
  assert.equal(b.rows[0].ok, true)
})

// An odd ID above 2^53: no double holds it. (IDs issued in the same millisecond differ in
// their sequence, so the fixture has some.)
function oddId() {
  const r = ref.find((x) => BigInt(x.sf_text) % 2n === 1n)
  assert.ok(r, 'an odd ID among the fixture\'s')
  return r
}

test('text: a Number parameter for an ID above 2^53 is another ID', async () => {
  const exact = oddId().sf_text
  const r = await client.query('SELECT $1::bigint AS sent', [Number(exact)])
  // Number() rounds to a double, and pg sends that double's shortest decimal
  assert.equal(r.rows[0].sent, String(Number(exact)))
  assert.notEqual(r.rows[0].sent, exact)
})

// docs/applications.md's ORMs section: int8 (OID 20) parsed by parseInt is another ID; by BigInt, exact.
test('text: an int8 type parser of parseInt rounds an ID, of BigInt keeps it', async () => {
  const r0 = oddId()
  const parsedBy = (parser) => ({
    getTypeParser: (oid, format) => (oid === 20 ? parser : pg.types.getTypeParser(oid, format)),
  })
  const sql = 'SELECT sf FROM ids WHERE k = $1'
  const rounded = (await client.query({ text: sql, values: [r0.k], types: parsedBy(parseInt) })).rows[0].sf
  assert.equal(typeof rounded, 'number')
  assert.notEqual(BigInt(rounded), BigInt(r0.sf_text))
  const exact = (await client.query({ text: sql, values: [r0.k], types: parsedBy(BigInt) })).rows[0].sf
  assert.equal(exact, BigInt(r0.sf_text))
  assert.throws(() => JSON.stringify({ id: exact }), TypeError)
  assert.equal(JSON.stringify({ id: exact.toString() }), `{"id":"${r0.sf_text}"}`)
})

test('binary results: not usable with pg 8; binary parameters are exact', async () => {
  const sql = 'SELECT k, sf, u, l FROM ids ORDER BY k'
  // binary: true takes effect only in the extended protocol: a query without parameters
  // goes by the simple protocol, whose results are text (and exact), unless queryMode
  // says otherwise.
  const simple = await client.query({ text: sql, binary: true })
  assert.ok(simple.fields.every((f) => f.format === 'text'))
  checkRows(simple.rows, ulidBig)
  // In the extended protocol the results are binary, but pg decodes every field as UTF-8
  // before its type parser sees it (node-postgres issue 3495): bytes that are not UTF-8
  // become U+FFFD, and the value another one, silently. A parser that returns the bytes
  // of uuid and ulid (pg has none for them) gets the mangled bytes.
  const types = {
    getTypeParser(oid, format) {
      if (format === 'binary' && (oid === UUID_OID || oid === ulidOid)) return (b) => Buffer.from(b)
      return pg.types.getTypeParser(oid, format)
    },
  }
  const res = await client.query({ text: sql, binary: true, queryMode: 'extended', types })
  assert.ok(res.fields.every((f) => f.format === 'binary'))
  const utf8 = (b) => Buffer.from(b.toString('utf8')) // what pg 8 does to each field
  let wrong = 0
  res.rows.forEach((row, i) => {
    const r = ref[i]
    const sf = Buffer.alloc(8)
    sf.writeBigInt64BE(BigInt(r.sf_text))
    const u = Buffer.from(r.u_text.replaceAll('-', ''), 'hex')
    const l = Buffer.from(r.l_hex, 'hex')
    assert.equal(row.sf, pg.types.getTypeParser(20, 'binary')(utf8(sf)))
    assert.equal(row.sf === r.sf_text, utf8(sf).equals(sf))
    assert.deepEqual(row.u, utf8(u))
    assert.deepEqual(row.l, utf8(l))
    wrong += (row.sf !== r.sf_text) + !row.u.equals(u) + !row.l.equals(l)
  })
  assert.ok(wrong > 0)
  // One ID whatever the clock: 0x1954e1ba8c009400 comes back as 0x1954e1ba8c00efbf.
  const one = await client.query({
    text: 'SELECT 1825331940320908288::bigint AS id', binary: true, queryMode: 'extended',
  })
  assert.equal(one.rows[0].id, '1825331940320931775')

  // Parameters are another matter: a Buffer is sent in binary format, byte for byte; with
  // $4::ulid the server reads it with ulid_recv (16 bytes), with $3::uuid with uuid_recv.
  for (const r of ref) {
    const u = Buffer.from(r.u_text.replaceAll('-', ''), 'hex')
    const l = Buffer.from(r.l_hex, 'hex')
    await client.query('INSERT INTO back VALUES ($1, $2, $3::uuid, $4::ulid)', [r.k, r.sf_text, u, l])
  }
  await checkBack()
  await assert.rejects(client.query('SELECT $1::ulid', [Buffer.alloc(17)]), { code: '22P03' })
})

test('JSON: a number above 2^53 loses its last digits in JSON.parse; text is exact', async () => {
  // The figures in docs/applications.md. This ID happens to be a double (a multiple of 256), but
  // JavaScript prints and re-serialises it as another ID; its odd neighbour becomes it.
  const measured = JSON.parse('{"id": 1824765823852478464}').id
  assert.equal(String(measured), '1824765823852478500')
  assert.equal(JSON.stringify({ id: measured }), '{"id":1824765823852478500}')
  assert.equal(BigInt(JSON.parse('1824765823852478465')), 1824765823852478464n)
  // the README's words: the number read is ...464, and Node prints it as ...500
  assert.equal(String(JSON.parse('1824765823852478465')), '1824765823852478500')
  assert.equal(JSON.parse('"1824765823852478465"'), '1824765823852478465')
  const r0 = oddId()
  const exact = r0.sf_text
  const res = await client.query(
    `SELECT to_json(sf) AS number, to_json(sf)::text AS number_text,
            to_json(sf::text) AS string, to_json(sf::text)::text AS string_text,
            json_build_object('id', sf::text) AS obj
       FROM ids WHERE k = $1`, [r0.k])
  const row = res.rows[0]
  assert.equal(row.number_text, exact) // the server's JSON is exact...
  assert.equal(typeof row.number, 'number') // ...pg runs JSON.parse on it...
  assert.notEqual(BigInt(row.number), BigInt(exact)) // ...and the ID is now another one
  assert.notEqual(String(row.number), exact)
  assert.equal(JSON.parse(row.number_text), row.number)
  assert.equal(row.string, exact)
  assert.equal(JSON.parse(row.string_text), exact)
  assert.deepEqual(row.obj, { id: exact })
  assert.equal(BigInt(row.obj.id), BigInt(exact))
})

test("JSON: IDs emitted as JSON strings (docs/applications.md's form and json_build_object) stay exact", async () => {
  const texts = (await client.query('SELECT id::text AS id FROM orders ORDER BY id')).rows.map((r) => r.id)
  const a = await client.query("SELECT json_build_object('id', id::text, 'item', item) AS j FROM orders ORDER BY id")
  assert.deepEqual(a.rows.map((r) => r.j), [{ id: texts[0], item: 'tea' }, { id: texts[1], item: 'cake' }])
  const b = await client.query("SELECT to_jsonb(o) || jsonb_build_object('id', o.id::text) AS j FROM orders o ORDER BY id")
  assert.deepEqual(b.rows.map((r) => r.j), [{ id: texts[0], item: 'tea' }, { id: texts[1], item: 'cake' }])
  const c = await client.query('SELECT to_jsonb(id::text) AS j FROM orders ORDER BY id')
  assert.deepEqual(c.rows.map((r) => r.j), texts)
  // whereas the row as it is has the ID as a number, rounded by JSON.parse
  const d = await client.query('SELECT to_jsonb(o) AS j FROM orders o ORDER BY id')
  assert.equal(typeof d.rows[0].j.id, 'number')
})

test('JSON: uuid and ulid are JSON strings, their text', async () => {
  const res = await client.query(
    `SELECT to_json(u) AS u, to_json(l) AS l, json_typeof(to_json(u)) AS ut,
            json_typeof(to_json(l)) AS lt, to_jsonb(ids) AS whole FROM ids WHERE k = 1`)
  const r = res.rows[0]
  assert.equal(r.ut, 'string')
  assert.equal(r.lt, 'string')
  assert.equal(r.u, ref[0].u_text)
  assert.equal(r.l, ref[0].l_text)
  assert.deepEqual({ u: r.whole.u, l: r.whole.l }, { u: ref[0].u_text, l: ref[0].l_text })
})

test('a ulid key looked up by a UUID string: sent untyped, as ulid; and as $1::uuid', async () => {
  await client.query(`SET enable_seqscan = off;
    CREATE TEMP TABLE ulid_lookup (id ulid PRIMARY KEY, n int NOT NULL);
    INSERT INTO ulid_lookup SELECT ulid(), g FROM generate_series(1, 2000) g;
    ANALYZE ulid_lookup`)
  const keys = (await client.query('SELECT id::uuid AS u FROM ulid_lookup ORDER BY n')).rows.map((r) => r.u)
  assert.equal(keys.length, 2000)
  assert.match(keys[0], /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  // pg sends a string parameter with no type (OID 0): the server takes $1 for a ulid, whose
  // input reads the UUID form; $1::uuid compares with the ulid = uuid operator. A JS array
  // of strings is an array literal: ulid[] or uuid[].
  const plan = async (sql, param) =>
    (await client.query('EXPLAIN ' + sql, [param])).rows.map((r) => r['QUERY PLAN']).join('\n')
  for (const [where, cast] of [['id = $1', '::ulid'], ['id = $1::uuid', '::uuid']]) {
    const sql = `SELECT n FROM ulid_lookup WHERE ${where}`
    for (let n = 1; n <= 2000; n += 97) {
      const { rows } = await client.query(sql, [keys[n - 1]])
      assert.deepEqual(rows, [{ n }], `${where}, row ${n}`)
    }
    const p = await plan(sql, keys[0])
    assert.ok(p.includes('ulid_lookup_pkey'), `${where}: the primary key's index\n${p}`)
    assert.ok(p.includes(cast), `${where}: compared as ${cast}\n${p}`)
  }
  const some = [keys[4], keys[400], keys[1999]]
  for (const [where, cast] of [['id = ANY($1)', '::ulid[]'], ['id = ANY($1::uuid[])', '::uuid[]']]) {
    const sql = `SELECT n FROM ulid_lookup WHERE ${where} ORDER BY n`
    const { rows } = await client.query(sql, [some])
    assert.deepEqual(rows, [{ n: 5 }, { n: 401 }, { n: 2000 }], where)
    const p = await plan(sql, some)
    assert.ok(p.includes('ulid_lookup_pkey'), `${where}: the primary key's index\n${p}`)
    assert.ok(p.includes(cast), `${where}: compared as ${cast}\n${p}`)
  }
  await client.query('RESET enable_seqscan')
})
