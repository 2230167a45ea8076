// Where rubrica's start-up time and resident memory go, step by step, in a fresh `node` process each time (no
// tsx loader in the measured process): loading the module graph of dist/app.js, opening the pool with a first
// prepared query, and the first Prisma query (which instantiates Prisma's WASM query compiler).
//
//   DATABASE_URL=postgres://…/<a migrated rubrica database> tsx bench/footprint.ts [repeats]
import { spawnSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './median.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const url = process.env.DATABASE_URL
if (!url) {
  console.error('DATABASE_URL (a migrated rubrica database) is required')
  process.exit(2)
}
const repeats = Number(process.argv[2] ?? 3)

// Runs in a child `node`: prints one JSON line of {step: [ms since process start, RSS MB]}.
const probe = `
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024
const steps = {}
const mark = (name) => { steps[name] = [Math.round(performance.now()), Math.round(rss())] }
mark('node started')
await import('./dist/app.js')
mark('dist/app.js module graph loaded')
const { openDatabase } = await import('./dist/db/database.js')
const db = await openDatabase({ url: process.env.DATABASE_URL, poolSize: 4 })
await db.query('probe', 'SELECT 1', [])
mark('pool open, first prepared query')
await db.prisma.tenant.findFirst()
mark('first Prisma query (WASM query compiler)')
await db.prisma.apiKey.findFirst({ include: { tenant: true } })
mark('second Prisma query')
await db.close()
process.stdout.write(JSON.stringify(steps) + '\\n')
`

const runs: Record<string, [number, number]>[] = []
for (let i = 0; i < repeats; i++) {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: root,
    env: { PATH: process.env.PATH, DATABASE_URL: url, NODE_ENV: 'production' },
    encoding: 'utf8',
    timeout: 60_000,
  })
  if (child.status !== 0) {
    console.error(child.stderr)
    process.exit(1)
  }
  runs.push(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}'))
}

const names = Object.keys(runs[0] ?? {})
console.log(`| step | at (ms since process start) | step time (ms) | RSS (MB) | RSS step (MB) |`)
console.log('| --- | ---: | ---: | ---: | ---: |')
let previous: [number, number] = [0, 0]
for (const name of names) {
  const at = median(runs.map((r) => r[name]?.[0] ?? 0)) ?? 0
  const mb = median(runs.map((r) => r[name]?.[1] ?? 0)) ?? 0
  console.log(`| ${name} | ${at} | ${at - previous[0]} | ${mb} | ${mb - previous[1]} |`)
  previous = [at, mb]
}
console.log(`\n(medians of ${repeats} fresh processes)`)
