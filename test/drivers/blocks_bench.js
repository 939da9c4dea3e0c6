// The benchmark's part (bench/blocks.sh) for node-postgres: keys for 1,000,000 parents and
// 3,000,000 children handed out by one IdBlocks of blocks of 1,000 to 8 concurrent callers,
// each asking for a batch's 4,000 at a time. Prints a Markdown row.
// Run: node blocks_bench.js TOTAL
'use strict'
const pg = require('pg')
const { IdBlocks } = require('snowflake-block')

async function main () {
  const total = Number(process.argv[2])
  const client = new pg.Client()
  await client.connect()
  await client.query('SELECT snowflake()') // the first reservation: not part of the time
  let blocks = 0
  const keys = new IdBlocks(async (n) => {
    blocks++
    return (await client.query('SELECT first, last, count FROM snowflake_block($1)', [n])).rows[0]
  }, 1000)
  let handed = 0
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (handed < total) {
      handed += 4000
      await keys.nextIds(4000)
    }
  }))
  const took = Number(process.hrtime.bigint() - t0) / 1e9
  await client.end()
  console.log(`| JavaScript \`IdBlocks\`, node-postgres, 8 concurrent callers | ${handed} | ${took.toFixed(2)} | ${(handed / took).toFixed(0)} | ${blocks} |`)
}

main().catch((e) => { console.error(e); process.exit(1) })
