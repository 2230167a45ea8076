// npm run fuzz -- --runs N [--seed S] [--all] [--reporter R]
// Runs the property-based suites (hostile input, isolation, races: PROPERTY_SUITES) with many more cases than
// `npm test` does, on the configured test database (PGlite, or TEST_DATABASE_URL), then prints how many requests
// each endpoint got, by status. --all adds the example-based files (test/regressions/, slow clients).
// The seed is printed first: the same --seed and --runs replay the same cases.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const PROPERTY_SUITES = ['test/fuzz/hostile-input.test.ts', 'test/fuzz/isolation.test.ts', 'test/fuzz/races.test.ts']
/** One file per past bug (test/regressions/), and the slow clients. */
const OTHER_SUITES = [
  ...readdirSync('test/regressions')
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `test/regressions/${name}`),
  'test/fuzz/slow-clients.test.ts',
]

function usage(message: string): never {
  console.error(`${message}\nusage: npm run fuzz -- --runs N [--seed S] [--all] [--reporter tap|terse|dot|base]`)
  process.exit(2)
}

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    seed: { type: 'string' },
    all: { type: 'boolean', default: false },
    reporter: { type: 'string', default: 'terse' },
  },
})
const runs = Number(values.runs)
if (!Number.isSafeInteger(runs) || runs < 1) usage(`--runs must be a positive integer, got ${values.runs}`)
const seed = values.seed === undefined ? (Math.random() * 2 ** 31) | 0 : Number(values.seed)
if (!Number.isSafeInteger(seed) || Math.abs(seed) >= 2 ** 31)
  usage(`--seed must be a 32-bit integer, got ${values.seed}`)

const statsDir = mkdtempSync(join(tmpdir(), 'rubrica-fuzz-'))
const statsFile = join(statsDir, 'stats.jsonl')
const files = values.all ? [...PROPERTY_SUITES, ...OTHER_SUITES] : PROPERTY_SUITES
const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'embedded PGlite'
console.log(`fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} on ${database}; ${files.length} files`)

const started = Date.now()
const child = spawn('npx', ['tap', '--disable-coverage', '--timeout=0', `--reporter=${values.reporter}`, ...files], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_SEED: String(seed), FUZZ_RUNS: String(runs), FUZZ_STATS_FILE: statsFile },
})
const code: number = await new Promise((resolve) => child.on('close', (status) => resolve(status ?? 1)))
const seconds = (Date.now() - started) / 1000

interface SuiteStats {
  suite: string
  counts: Record<string, Record<string, number>>
}
const lines = existsSync(statsFile) ? readFileSync(statsFile, 'utf8').trim().split('\n').filter(Boolean) : []
rmSync(statsDir, { recursive: true, force: true })
const suites = lines.map((line) => JSON.parse(line) as SuiteStats)

/** "chaos GET /contacts/:id" and "GET /contacts/:id" are the same endpoint. */
const endpointOf = (name: string) => name.replace(/^chaos /, '')
const byEndpoint = new Map<string, Record<string, number>>()
for (const { counts } of suites) {
  for (const [name, statuses] of Object.entries(counts)) {
    const total = byEndpoint.get(endpointOf(name)) ?? {}
    for (const [status, n] of Object.entries(statuses)) total[status] = (total[status] ?? 0) + n
    byEndpoint.set(endpointOf(name), total)
  }
}
const sum = (statuses: Record<string, number>) => Object.values(statuses).reduce((a, b) => a + b, 0)

console.log(`\nfuzz summary: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}, ${database}, ${seconds.toFixed(1)} s, exit ${code}`)
if (suites.length === 0) console.log('no statistics were written (did a suite crash before its end?)')
for (const { suite, counts } of suites) {
  const total = Object.values(counts).reduce((a, s) => a + sum(s), 0)
  const parts = Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([endpoint, statuses]) => `${endpoint} ${sum(statuses)}`)
  console.log(`  ${suite}: ${total} requests (${parts.join(', ')})`)
}
console.log('requests per endpoint (all suites):')
for (const [endpoint, statuses] of [...byEndpoint].sort(([a], [b]) => a.localeCompare(b))) {
  const detail = Object.entries(statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status}:${n}`)
    .join(' ')
  console.log(`  ${endpoint.padEnd(30)} ${String(sum(statuses)).padStart(7)}  ${detail}`)
}
if (code !== 0) console.log(`\nfailures: replay with  npm run fuzz -- --runs ${runs} --seed ${seed}`)
process.exit(code)
