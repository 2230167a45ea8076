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

export interface CommandLine {
  mode: Mode
  options: BenchOptions
  /** Reuse the bench database when its counts match, and do not drop it. */
  keep: boolean
  /** Where to write all results as JSON. */
  out: string | undefined
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

/** Reads process.argv; prints --help and exits 0, or exits 2 on a bad command line. */
export function readCommandLine(): CommandLine {
  const flags = exitOnError(parseFlags, ' (see --help)')
  if (flags.help) {
    process.stdout.write(HELP)
    process.exit(0)
  }
  const mode = exitOnError(() => modeOf(flags))
  const options = exitOnError(() => benchOptions(flags, mode))
  return { mode, options, keep: flags.keep, out: flags.out }
}

type Flags = ReturnType<typeof parseFlags>

function parseFlags() {
  return parseArgs({
    options: {
      tenants: { type: 'string' },
      contacts: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      threads: { type: 'string' },
      rounds: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      large: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'one-tenant': { type: 'boolean', default: false },
      search: { type: 'boolean', default: false },
      citus: { type: 'boolean', default: false },
      before: { type: 'string' },
      database: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  }).values
}

function modeOf(flags: Flags): Mode {
  if (flags.smoke && flags.large) fail('--smoke and --large exclude each other')
  return flags.smoke ? 'smoke' : flags.large ? 'large' : 'full'
}

function preset(mode: Mode, keep: boolean) {
  return {
    full: { tenants: 10, contacts: 100_000, duration: 10, connections: 50, database: 'rubrica_bench' },
    smoke: {
      tenants: 2,
      contacts: 2_000,
      duration: 2,
      connections: 10,
      // Never shared with a concurrent run (CI on a busy machine) unless kept on purpose.
      database: keep ? 'rubrica_bench_smoke' : `rubrica_bench_smoke_${process.pid}`,
    },
    large: { tenants: 1, contacts: 1_000_000, duration: 10, connections: 10, database: 'rubrica_bench_large' },
  }[mode]
}

function benchOptions(flags: Flags, mode: Mode): BenchOptions {
  const defaults = preset(mode, flags.keep)
  const options = {
    tenants: integer('tenants', flags.tenants, defaults.tenants, 1, 1000),
    contacts: integer('contacts', flags.contacts, defaults.contacts, 1, 1_000_000),
    duration: integer('duration', flags.duration, defaults.duration, 1, 600),
    connections: integer('connections', flags.connections, defaults.connections, 1, 10_000),
    threads: integer('threads', flags.threads, 1, 1, 64),
    rounds: integer('rounds', flags.rounds, mode === 'smoke' ? 1 : 3, 1, 20),
    database: flags.database ?? defaults.database,
    warmup: mode === 'smoke' ? 1 : 2,
    scenarios: scenariosOf(flags),
    citus: flags.citus,
    before: flags.before === undefined ? undefined : resolve(flags.before),
  }
  if (options.before !== undefined && !existsSync(join(options.before, 'dist', 'server.js')))
    fail(`--before: ${options.before}/dist/server.js is missing (npm ci && npm run build there first)`)
  if (options.before !== undefined && options.citus) fail('--before and --citus exclude each other')
  if (flags['one-tenant'] && options.tenants < 2) fail('--one-tenant needs at least 2 tenants to spread over')
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.database)) fail('--database must be a plain lower-case name')
  if (options.threads > options.connections) fail('--threads cannot exceed --connections')
  return options
}

/**
 * Every scenario; --citus leaves out g and h (rubrica-only variants); --one-tenant measures e, i, f, j alone;
 * --search the first page and its filtered variants, k, l and m.
 */
function scenariosOf(flags: Flags): ScenarioId[] {
  if (flags['one-tenant']) return ['e', 'i', 'f', 'j']
  if (flags.search) return ['b', 'k', 'l', 'm']
  return flags.citus
    ? ['a', 'b', 'c', 'd', 'e', 'f', 'k', 'l', 'm']
    : ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'k', 'l', 'm']
}

function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    fail(`--${name} must be an integer from ${min} to ${max}`)
  }
  return Number(value)
}

function fail(message: string): never {
  throw new Error(message)
}

function exitOnError<T>(read: () => T, hint = ''): T {
  try {
    return read()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}${hint}\n`)
    process.exit(2)
  }
}
