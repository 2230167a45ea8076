// The command line of bench/run.ts: the three presets (full, smoke, large), the options that override them, and
// --help. A bad command line exits with status 2 before anything starts.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { ScenarioId } from './wrk.ts'

export type Mode = 'smoke' | 'large' | 'full'

/** The shape of a run (written as is to --out's JSON). */
export interface BenchOptions {
  tenants: number
  contacts: number
  /** Seconds per scenario. */
  duration: number
  connections: number
  threads: number
  rounds: number
  database: string
  /** Seconds of warm-up per scenario and target. */
  warmup: number
  /** The scenarios measured, in the order of odd rounds (see measure.ts for even ones). */
  scenarios: ScenarioId[]
  /** Also run both targets on a database of the same name on the Citus coordinator (BENCH_CITUS_URL). */
  citus: boolean
  /** A checkout of an earlier commit, built: its rubrica is measured in the same rounds (`rubrica-before`). */
  before: string | undefined
}

const HELP = `usage: tsx bench/run.ts [options]
  --tenants N        tenants to seed (default 10; --smoke 2; --large 1)
  --contacts M       contacts per tenant (default 100000; --smoke 2000; --large 1000000)
  --duration S       seconds per scenario (default 10; --smoke 2)
  --connections C    wrk connections (default 50; --smoke 10; --large 10)
  --threads T        wrk threads (default 1: the machine has few cores, wrk shares them with the servers)
  --rounds R         measure every scenario R times, alternating targets; the table shows the median (default 3;
                     --smoke 1)
  --smoke            tiny run for CI: exits non-zero if a scenario had errors or the harness failed
  --large            1 tenant x 1,000,000 contacts, 10 connections; adds the list p99 < 20 ms targets
  --keep             reuse the bench database when its counts match, and do not drop it at the end
  --one-tenant       measure POST and PATCH with all requests on one tenant (i, j) against the same load spread
                     over every tenant (e, f), alternating which goes first by round; the baseline runs e and f
  --search           the first page (b) and the same page filtered by a tag (k), by three tags and a stage (l) and
                     by words (m), then the count of a tag on ~30% of a tenant; with --large on 1,000,000
  --citus            the same run on a database of the same name on a Citus coordinator too (BENCH_CITUS_URL,
                     created with scripts/citus-cluster.sh db NAME), both targets, alternating with PostgreSQL;
                     scenarios a-f only (with --one-tenant, its four); reports Citus against PostgreSQL
  --before DIR       also measure the rubrica built in DIR (a clone or worktree of an earlier commit, after its
                     "npm ci && npm run build") in the same rounds, on the same database; reports after against
                     before, each against the baseline (the database is deployed by this checkout's migrations)
  --database NAME    bench database name (default rubrica_bench, rubrica_bench_large, rubrica_bench_smoke_<pid>)
  --out FILE         also write all results as JSON
Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), the server used to create the
bench database; the bench database lives on the same server. BENCH_CITUS_URL (default
postgres://postgres@127.0.0.1:9700/postgres), the Citus coordinator of --citus.
`

/** The integer options: each one's preset in full, smoke and large runs, and its bounds. */
const INTEGERS = {
  tenants: { full: 10, smoke: 2, large: 1, min: 1, max: 1000 },
  contacts: { full: 100_000, smoke: 2_000, large: 1_000_000, min: 1, max: 1_000_000 },
  duration: { full: 10, smoke: 2, large: 10, min: 1, max: 600 },
  connections: { full: 50, smoke: 10, large: 10, min: 1, max: 10_000 },
  threads: { full: 1, smoke: 1, large: 1, min: 1, max: 64 },
  rounds: { full: 3, smoke: 1, large: 3, min: 1, max: 20 },
}
type IntegerOption = keyof typeof INTEGERS

/** Reads process.argv: the mode, the options, --keep (reuse the database, do not drop it) and --out (the JSON). */
export function readCommandLine(): { mode: Mode; options: BenchOptions; keep: boolean; out: string | undefined } {
  try {
    return commandLine()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)} (see --help)\n`)
    process.exit(2)
  }
}

function commandLine() {
  const { values: flags } = parseArgs({
    options: {
      tenants: { type: 'string' },
      contacts: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      threads: { type: 'string' },
      rounds: { type: 'string' },
      smoke: { type: 'boolean' },
      large: { type: 'boolean' },
      keep: { type: 'boolean' },
      'one-tenant': { type: 'boolean' },
      search: { type: 'boolean' },
      citus: { type: 'boolean' },
      before: { type: 'string' },
      database: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  })
  if (flags.help) {
    process.stdout.write(HELP)
    process.exit(0)
  }
  if (flags.smoke && flags.large) throw new Error('--smoke and --large exclude each other')
  const mode: Mode = flags.smoke ? 'smoke' : flags.large ? 'large' : 'full'
  const integer = (name: IntegerOption) => {
    const { min, max, [mode]: preset } = INTEGERS[name]
    const value = flags[name]
    if (value === undefined) return preset
    if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new Error(`--${name} must be an integer from ${min} to ${max}`)
    }
    return Number(value)
  }
  // A smoke run's database is never shared with a concurrent run (CI on a busy machine) unless kept on purpose.
  const smokeDatabase = flags.keep ? 'rubrica_bench_smoke' : `rubrica_bench_smoke_${process.pid}`
  const options: BenchOptions = {
    tenants: integer('tenants'),
    contacts: integer('contacts'),
    duration: integer('duration'),
    connections: integer('connections'),
    threads: integer('threads'),
    rounds: integer('rounds'),
    database: flags.database ?? { full: 'rubrica_bench', smoke: smokeDatabase, large: 'rubrica_bench_large' }[mode],
    warmup: mode === 'smoke' ? 1 : 2,
    // --one-tenant measures e, i, f, j alone; --search the first page and its filtered variants; --citus leaves out
    // g and h (rubrica-only variants).
    scenarios: flags['one-tenant']
      ? ['e', 'i', 'f', 'j']
      : flags.search
        ? ['b', 'k', 'l', 'm']
        : ['a', 'b', 'c', 'd', 'e', 'f', ...(flags.citus ? [] : (['g', 'h'] as const)), 'k', 'l', 'm'],
    citus: flags.citus === true,
    before: flags.before === undefined ? undefined : resolve(flags.before),
  }
  if (options.before !== undefined && !existsSync(join(options.before, 'dist', 'server.js')))
    throw new Error(`--before: ${options.before}/dist/server.js is missing (npm ci && npm run build there first)`)
  if (options.before !== undefined && options.citus) throw new Error('--before and --citus exclude each other')
  if (flags['one-tenant'] && options.tenants < 2)
    throw new Error('--one-tenant needs at least 2 tenants to spread over')
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.database)) throw new Error('--database must be a plain lower-case name')
  if (options.threads > options.connections) throw new Error('--threads cannot exceed --connections')
  return { mode, options, keep: flags.keep === true, out: flags.out }
}
