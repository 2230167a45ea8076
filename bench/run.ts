// Benchmarks rubrica against a raw-SQL ceiling (bench/baseline.ts) in the same run, on the same database.
// See docs/BENCHMARKS.md for what each scenario does and the measured results.
//
//   npm run bench                      # 10 tenants x 100,000 contacts, 10 s per scenario, 50 connections
//   npm run bench -- --smoke           # 2 x 2,000, 2 s per scenario, 10 connections (CI)
//   npm run bench -- --large           # 1 x 1,000,000, 10 connections, list p99 target
//   tsx bench/run.ts --keep --profile  # reuse a seeded database; CPU profiles of rubrica under load
//
// Steps: build dist/ if needed, create (or reuse with --keep) the bench database, deploy the migrations and seed
// it with the admin CLI, sample ids and deep cursors with SQL, start rubrica (dist/server.js) and the baseline,
// check both answer the same JSON, warm up, run each scenario with wrk (rubrica and baseline alternating),
// sample the servers' RSS and CPU, print one table and the target checks, then stop everything and drop the
// database (unless --keep). Targets are reported, not asserted: the full run exits 0 unless the harness
// itself failed; --smoke exits non-zero when a scenario had errors.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { formatComparison, formatProfile, readProfile, summariseProfile, type Window } from './profile.ts'
import {
  BENCH_EMAIL_DOMAIN,
  errorCount,
  killWrk,
  luaScript,
  runWrk,
  SCENARIOS,
  type ScenarioId,
  type TenantSample,
  type WrkResult,
} from './wrk.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

// ---------------------------------------------------------------------------------------------------------------
// Options

const { values: flags } = (() => {
  try {
    return parseCommandLine()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)} (see --help)\n`)
    process.exit(2)
  }
})()

function parseCommandLine() {
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
      profile: { type: 'boolean', default: false },
      database: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  })
}

if (flags.help) {
  process.stdout.write(`usage: tsx bench/run.ts [options]
  --tenants N        tenants to seed (default 10; --smoke 2; --large 1)
  --contacts M       contacts per tenant (default 100000; --smoke 2000; --large 1000000)
  --duration S       seconds per scenario (default 10; --smoke 2)
  --connections C    wrk connections (default 50; --smoke 10; --large 10)
  --threads T        wrk threads (default 1: the machine has few cores, wrk shares them with the servers)
  --rounds R         measure every scenario R times, alternating targets; the table shows the median (default 1)
  --smoke            tiny run for CI: exits non-zero if a scenario had errors or the harness failed
  --large            1 tenant x 1,000,000 contacts, 10 connections; adds the list p99 < 20 ms target
  --keep             reuse the bench database when its counts match, and do not drop it at the end
  --profile          then profile rubrica and the baseline (node --cpu-prof) under GET by id and list first page,
                     and rubrica under POST, each alone; print top functions and CPU per request by package,
                     rubrica against the baseline
  --database NAME    bench database name (default rubrica_bench, rubrica_bench_large, rubrica_bench_smoke_<pid>)
  --out FILE         also write all results as JSON
Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), the server used to create the
bench database; the bench database lives on the same server.
`)
  process.exit(0)
}

function integer(name: string, value: string | undefined, fallback: number, min = 1, max = 10_000_000): number {
  if (value === undefined) return fallback
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new Error(`--${name} must be an integer from ${min} to ${max}`)
  }
  return Number(value)
}

if (flags.smoke && flags.large) {
  process.stderr.write('--smoke and --large exclude each other\n')
  process.exit(2)
}
const mode: 'smoke' | 'large' | 'full' = flags.smoke ? 'smoke' : flags.large ? 'large' : 'full'
const preset = {
  full: { tenants: 10, contacts: 100_000, duration: 10, connections: 50, database: 'rubrica_bench' },
  smoke: {
    tenants: 2,
    contacts: 2_000,
    duration: 2,
    connections: 10,
    // Never shared with a concurrent run (CI on a busy machine) unless kept on purpose.
    database: flags.keep ? 'rubrica_bench_smoke' : `rubrica_bench_smoke_${process.pid}`,
  },
  large: { tenants: 1, contacts: 1_000_000, duration: 10, connections: 10, database: 'rubrica_bench_large' },
}[mode]

let options: {
  tenants: number
  contacts: number
  duration: number
  connections: number
  threads: number
  rounds: number
  database: string
  warmup: number
}
try {
  options = {
    tenants: integer('tenants', flags.tenants, preset.tenants, 1, 1000),
    contacts: integer('contacts', flags.contacts, preset.contacts, 1, 1_000_000),
    duration: integer('duration', flags.duration, preset.duration, 1, 600),
    connections: integer('connections', flags.connections, preset.connections, 1, 10_000),
    threads: integer('threads', flags.threads, 1, 1, 64),
    rounds: integer('rounds', flags.rounds, 1, 1, 20),
    database: flags.database ?? preset.database,
    warmup: mode === 'smoke' ? 1 : 2,
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.database)) throw new Error('--database must be a plain lower-case name')
  if (options.threads > options.connections) throw new Error('--threads cannot exceed --connections')
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(2)
}

const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${options.database}`
  return url.toString()
})()
const POOL_SIZE = 4 // rubrica's default DATABASE_POOL_SIZE; the baseline gets the same
const RATE_LIMIT_MAX = 1_000_000_000
const runId = Date.now().toString(36)

// ---------------------------------------------------------------------------------------------------------------
// Processes: every child is tracked and killed on exit, on signals and on errors.

const children = new Set<ChildProcess>()
process.on('exit', () => {
  killWrk()
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

const log = (line = '') => process.stdout.write(`${line}\n`)
const note = (line: string) => process.stderr.write(`[bench] ${line}\n`)

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
    children.add(child)
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs / 1000} s`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      children.delete(child)
      if (code === 0) resolvePromise(out)
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${out}`))
    })
  })
}

/** The environment of rubrica's processes: only what they need, nothing inherited by accident (REDIS_URL…). */
function serviceEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? os.tmpdir(),
    NODE_ENV: 'production',
    DATABASE_URL: benchUrl,
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    ...extra,
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolvePromise(port))
    })
  })
}

interface HttpAnswer {
  status: number
  body: string
}

function http(
  url: string,
  method = 'GET',
  headers: Record<string, string> = {},
  body?: string,
  timeoutMs = 5000,
): Promise<HttpAnswer> {
  return new Promise((resolvePromise, reject) => {
    const sent = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
    const req = httpRequest(url, { method, headers: sent, agent: false, timeout: timeoutMs }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: text }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

interface Server {
  name: string
  child: ChildProcess
  pid: number
  port: number
  url: string
  /** Spawn to first 200 on /health, in milliseconds. */
  startMs: number
  /** When /health first answered 200, on the monotonic clock V8 stamps profile samples with (microseconds). */
  readyUs: number
  output: () => string
}

async function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, port: number): Promise<Server> {
  let output = ''
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const url = `http://127.0.0.1:${port}`
  const deadline = started + 30_000
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break
    const answer = await http(`${url}/health`, 'GET', {}, undefined, 1000).catch(() => null)
    if (answer?.status === 200) {
      return {
        name,
        child,
        pid: child.pid ?? 0,
        port,
        url,
        startMs: performance.now() - started,
        readyUs: Number(process.hrtime.bigint() / 1000n),
        output: () => output,
      }
    }
    await sleep(10)
  }
  child.kill('SIGKILL')
  throw new Error(`${name} did not answer 200 on /health within 30 s:\n${output}`)
}

async function stopServer(server: Server, graceMs = 10_000): Promise<void> {
  const { child } = server
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child)
    return
  }
  const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
  children.delete(child)
}

const sleep = (ms: number) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms))

// ---------------------------------------------------------------------------------------------------------------
// Resource sampling from /proc: RSS every 200 ms (peak) and CPU time (utime + stime) over a scenario.

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

function rssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match?.[1] ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

function cpuMs(pid: number): number {
  try {
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return 0
  }
}

/** CPU time the whole machine spent busy (all CPUs, /proc/stat), in milliseconds. */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS
}

/** CPU time of each PostgreSQL process (ours, and those of anyone else using the same server). */
function postgresCpuMs(): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        cpu.set(Number(entry), cpuMs(Number(entry)))
    } catch {
      // the process ended meanwhile
    }
  }
  return cpu
}

/** CPU the PostgreSQL processes used since `before` (a backend that ended meanwhile is not counted). */
function postgresCpuSince(before: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of postgresCpuMs()) total += ms - (before.get(pid) ?? 0)
  return total
}

interface Usage {
  rssPeakMb: number
  /** CPU of the server under test. */
  cpuMs: number
  /**
   * CPUs (in cores, on average) used by everything else than the server under test, wrk, PostgreSQL and this
   * harness: other people's work on a shared machine. Near 0 on a quiet machine.
   */
  otherCores: number
  /** CPU of all PostgreSQL processes (the bench's backends, plus anyone else's on a shared server). */
  postgresMs: number
  /** CPU of wrk (sampled every 200 ms, so slightly under). */
  wrkMs: number
  /** CPUs left idle, in cores, on average. */
  idleCores: number
}

/** Samples the server's RSS every 200 ms (peak) and the CPU use of it and of the rest of the machine. */
function sampleScenario(pid: number): { wrkStarted: (pid: number) => void; stop: () => Usage } {
  let peak = rssKb(pid)
  const started = performance.now()
  const cpuStart = cpuMs(pid)
  const busyStart = machineBusyMs()
  const pgStart = postgresCpuMs()
  const harnessStart = process.cpuUsage()
  let wrkPid = 0
  let wrkCpu = 0
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid))
    if (wrkPid) wrkCpu = Math.max(wrkCpu, cpuMs(wrkPid))
  }, 200)
  return {
    wrkStarted: (p) => {
      wrkPid = p
    },
    stop: () => {
      clearInterval(timer)
      peak = Math.max(peak, rssKb(pid))
      const server = cpuMs(pid) - cpuStart
      const harness = process.cpuUsage(harnessStart)
      const postgres = postgresCpuSince(pgStart)
      const busy = machineBusyMs() - busyStart
      const others = busy - server - postgres - wrkCpu - (harness.user + harness.system) / 1000
      const elapsed = performance.now() - started
      return {
        rssPeakMb: peak / 1024,
        cpuMs: server,
        otherCores: Math.max(0, others) / elapsed,
        postgresMs: postgres,
        wrkMs: wrkCpu,
        idleCores: Math.max(0, os.availableParallelism() - busy / elapsed),
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Database: create or reuse, deploy, seed, sample.

interface SeedMeta {
  tenants: { id: string; name: string; key: string }[]
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

const quoted = `"${options.database}"`

async function databaseExists(): Promise<boolean> {
  return withClient(adminUrl, async (client) => {
    const result = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database])
    return result.rowCount === 1
  })
}

async function dropDatabase(): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`))
}

/** Deletes what the POST scenario created, so that a kept database keeps its seeded counts. */
async function deleteBenchContacts(client: pg.Client): Promise<number> {
  const result = await client.query(`DELETE FROM contacts WHERE email_key LIKE $1`, [`wrk-%@${BENCH_EMAIL_DOMAIN}`])
  return result.rowCount ?? 0
}

/** The seeded keys of a kept database, when it holds exactly the requested tenants and contacts. */
async function reusableSeed(): Promise<SeedMeta | string> {
  if (!(await databaseExists())) return 'no bench database yet'
  return withClient(benchUrl, async (client) => {
    const meta = await client
      .query<{ tenants: number; contacts: number; seed: SeedMeta }>(
        'SELECT tenants, contacts, seed FROM bench_meta WHERE id = 1',
      )
      .catch(() => null)
    const row = meta?.rows[0]
    if (!row) return 'the bench database has no bench_meta record'
    if (row.tenants !== options.tenants || row.contacts !== options.contacts) {
      return `it was seeded with ${row.tenants} x ${row.contacts}`
    }
    const deleted = await deleteBenchContacts(client)
    if (deleted > 0) note(`deleted ${deleted} contacts left by an earlier POST scenario`)
    const counts = await client.query<{ tenant_id: string; n: string }>(
      'SELECT tenant_id, count(*) AS n FROM contacts GROUP BY tenant_id',
    )
    const tenantCount = await client.query<{ n: string }>('SELECT count(*) AS n FROM tenants')
    const expected = new Set(row.seed.tenants.map((t) => t.id))
    const matches =
      Number(tenantCount.rows[0]?.n) === options.tenants &&
      counts.rows.length === options.tenants &&
      counts.rows.every((r) => expected.has(r.tenant_id) && Number(r.n) === options.contacts)
    return matches ? row.seed : 'its counts do not match bench_meta'
  })
}

async function prepareDatabase(): Promise<{ seed: SeedMeta; reused: boolean; seedSeconds: number }> {
  if (flags.keep) {
    const reusable = await reusableSeed()
    if (typeof reusable !== 'string') {
      note(`--keep: reusing ${options.database} (${options.tenants} x ${options.contacts}, counts match)`)
      await run(process.execPath, ['bin/rubrica.js', 'db', 'deploy', '--json'], serviceEnv(), 120_000)
      return { seed: reusable, reused: true, seedSeconds: 0 }
    }
    note(`--keep: cannot reuse ${options.database} (${reusable}); seeding it again`)
  }
  await dropDatabase()
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${quoted}`))
  note(`created database ${options.database}; deploying migrations`)
  await run(process.execPath, ['bin/rubrica.js', 'db', 'deploy', '--json'], serviceEnv(), 120_000)
  const total = options.tenants * options.contacts
  note(`seeding ${options.tenants} tenant(s) x ${options.contacts} contacts (${total} rows) with the admin CLI…`)
  const started = performance.now()
  const out = await run(
    process.execPath,
    ['bin/rubrica.js', 'seed', '--tenants', String(options.tenants), '--contacts', String(options.contacts), '--json'],
    serviceEnv(),
    120_000 + total * 3, // measured about 0.2 ms per row on 2 cores; bounded, with room for a busy machine
  )
  const seedSeconds = (performance.now() - started) / 1000
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'))
  if (!line) throw new Error(`rubrica seed printed no JSON:\n${out}`)
  const seed = JSON.parse(line) as SeedMeta
  if (seed.tenants.length !== options.tenants) throw new Error(`rubrica seed returned ${seed.tenants.length} tenants`)
  note(`seeded in ${seedSeconds.toFixed(1)} s; analysing`)
  await withClient(benchUrl, async (client) => {
    // The seed's keys are shown only once: a kept bench database keeps them here (fake data, throwaway database).
    await client.query(
      'CREATE TABLE bench_meta (id int PRIMARY KEY, tenants int NOT NULL, contacts int NOT NULL, seed jsonb NOT NULL)',
    )
    await client.query('INSERT INTO bench_meta VALUES (1, $1, $2, $3)', [
      options.tenants,
      options.contacts,
      JSON.stringify({ tenants: seed.tenants }),
    ])
    await client.query('VACUUM ANALYZE')
  })
  return { seed, reused: false, seedSeconds }
}

async function sampleTenants(seed: SeedMeta): Promise<{ samples: TenantSample[]; depth: string }> {
  const idsPerTenant = Math.min(options.contacts, Math.max(200, Math.floor(20_000 / options.tenants)))
  const cursorsPerTenant = 20
  const depths: string[] = []
  const samples = await withClient(benchUrl, async (client) => {
    const out: TenantSample[] = []
    for (const tenant of seed.tenants) {
      const ids = await client.query<{ id: string }>(
        'SELECT id FROM contacts WHERE tenant_id = $1 ORDER BY random() LIMIT $2',
        [tenant.id, idsPerTenant],
      )
      const live = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL',
        [tenant.id],
      )
      const liveCount = Number(live.rows[0]?.n ?? 0)
      // Row numbers (1 = newest) spread over 89.5%-90.5% of the live history: a cursor at row r returns the
      // page that starts at row r + 1.
      const step = Math.max(1, Math.floor((liveCount * 0.01) / cursorsPerTenant))
      const first = Math.max(1, Math.floor(liveCount * 0.895))
      const rows = Array.from({ length: cursorsPerTenant }, (_, i) => Math.min(liveCount, first + i * step))
      const cursors = await client.query<{ created_at: Date }>(
        `SELECT created_at FROM (
           SELECT created_at, row_number() OVER (ORDER BY created_at DESC) AS rn
           FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL) s
         WHERE rn = ANY($2::bigint[]) ORDER BY rn`,
        [tenant.id, rows],
      )
      const tags = await client.query<{ name: string }>('SELECT name FROM tags WHERE tenant_id = $1 ORDER BY name', [
        tenant.id,
      ])
      if (ids.rows.length === 0 || cursors.rows.length === 0 || tags.rows.length === 0) {
        throw new Error(`tenant ${tenant.id} has no contacts, cursors or tags to sample`)
      }
      depths.push(`${first}-${rows.at(-1)} of ${liveCount}`)
      out.push({
        key: tenant.key,
        ids: ids.rows.map((r) => r.id),
        deepCursors: cursors.rows.map((r) => r.created_at.toISOString()),
        tags: tags.rows.map((r) => r.name),
      })
    }
    return out
  })
  return { samples, depth: depths[0] ?? '' }
}

// ---------------------------------------------------------------------------------------------------------------
// Checks before measuring: the baseline answers what rubrica answers, and the write scenarios get 201/200.

async function compareAnswers(rubrica: Server, baseline: Server, samples: TenantSample[]): Promise<string[]> {
  const problems: string[] = []
  for (const tenant of samples.slice(0, 2)) {
    const headers = { authorization: `Bearer ${tenant.key}` }
    const paths = [
      ...tenant.ids.slice(0, 3).map((id) => `/api/v1/contacts/${id}`),
      '/api/v1/contacts?limit=50',
      `/api/v1/contacts?limit=50&cursor=${tenant.deepCursors[0]}`,
      '/api/v1/contacts?limit=50&stage=customer&emailStatus=active',
      '/api/v1/contacts?limit=50&stage=ex_customer&emailStatus=complained',
      '/api/v1/contacts?limit=200&includeArchived=true',
      '/api/v1/contacts/00000000-0000-4000-8000-000000000000',
    ]
    for (const path of paths) {
      const [a, b] = await Promise.all([
        http(rubrica.url + path, 'GET', headers),
        http(baseline.url + path, 'GET', headers),
      ])
      const expectedStatus = path.includes('00000000-0000') ? 404 : 200
      if (a.status !== expectedStatus) problems.push(`rubrica GET ${path}: ${a.status} ${a.body.slice(0, 300)}`)
      else if (b.status !== expectedStatus) problems.push(`baseline GET ${path}: ${b.status} ${b.body.slice(0, 300)}`)
      else if (expectedStatus === 200 && a.body !== b.body) {
        let at = 0
        while (at < a.body.length && a.body[at] === b.body[at]) at++
        problems.push(
          `GET ${path}: bodies differ at character ${at}: rubrica …${a.body.slice(at, at + 80)}… baseline …${b.body.slice(at, at + 80)}…`,
        )
      }
    }
  }
  return problems
}

async function checkWrites(rubrica: Server, samples: TenantSample[]): Promise<string[]> {
  const problems: string[] = []
  const tenant = samples[0]
  if (!tenant) return ['no tenant sampled']
  const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' }
  const created = await http(
    `${rubrica.url}/api/v1/contacts`,
    'POST',
    headers,
    JSON.stringify({
      email: `wrk-${runId}-check-0@${BENCH_EMAIL_DOMAIN}`,
      firstName: 'Bench',
      lastName: 'Load',
      phone: '+39 02 1234 5678',
      tags: [tenant.tags[0]],
    }),
  )
  if (created.status !== 201) problems.push(`POST: ${created.status} ${created.body.slice(0, 300)}`)
  const patched = await http(
    `${rubrica.url}/api/v1/contacts/${tenant.ids[0]}`,
    'PATCH',
    headers,
    JSON.stringify({ stage: 'customer', consentType: 'consent' }),
  )
  if (patched.status !== 200) problems.push(`PATCH: ${patched.status} ${patched.body.slice(0, 300)}`)
  return problems
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring

type Target = 'rubrica' | 'baseline'

interface Measurement {
  scenario: ScenarioId
  target: Target
  round: number
  wrk: WrkResult
  rps: number
  errors: number
  rssPeakMb: number
  /** Server CPU (user + system) per request, in milliseconds. */
  cpuMsPerRequest: number
  /** Other people's CPU use during the scenario, in cores (see sampleScenario). */
  otherCores: number
  /** PostgreSQL's CPU per request, in milliseconds (all its processes: includes other users of the server). */
  postgresMsPerRequest: number
  wrkMsPerRequest: number
  /** CPUs left idle during the scenario, in cores. */
  idleCores: number
}

const BASELINE_SCENARIOS: readonly ScenarioId[] = ['a', 'b', 'c']
const ORDER: readonly ScenarioId[] = ['a', 'b', 'c', 'd', 'e', 'f']

async function measure(
  scenario: ScenarioId,
  target: Target,
  server: Server,
  scripts: Record<ScenarioId, string>,
  seconds: number,
  round: number,
): Promise<Measurement> {
  stopIfInterrupted()
  const sampler = sampleScenario(server.pid)
  const wrk = await runWrk({
    url: server.url,
    script: scripts[scenario],
    seconds,
    connections: options.connections,
    threads: options.threads,
    onStart: sampler.wrkStarted,
  })
  const usage = sampler.stop()
  const rps = wrk.requests / (wrk.durationUs / 1e6)
  return {
    scenario,
    target,
    round,
    wrk,
    rps,
    errors: errorCount(wrk),
    rssPeakMb: usage.rssPeakMb,
    cpuMsPerRequest: wrk.requests > 0 ? usage.cpuMs / wrk.requests : 0,
    otherCores: usage.otherCores,
    postgresMsPerRequest: wrk.requests > 0 ? usage.postgresMs / wrk.requests : 0,
    wrkMsPerRequest: wrk.requests > 0 ? usage.wrkMs / wrk.requests : 0,
    idleCores: usage.idleCores,
  }
}

function median(measurements: Measurement[]): Measurement | undefined {
  const sorted = [...measurements].sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

interface ProfileRun {
  target: Target
  scenario: ScenarioId
  /** Where the .cpuprofile was kept. */
  file: string
  /** The measured load, on V8's sample clock. */
  window: Window
  /** The process's first 200 on /health, on the same clock. */
  readyUs: number
  requests: number
}

/** Runs one target under `node --cpu-prof`: start, warm up, measure one scenario, stop (the profile is written). */
async function profileScenario(
  target: Target,
  scenario: ScenarioId,
  scripts: Record<ScenarioId, string>,
  profileRoot: string,
): Promise<ProfileRun> {
  stopIfInterrupted()
  const dir = join(profileRoot, `${target}-${scenario}`)
  mkdirSync(dir, { recursive: true })
  const port = await freePort()
  const profiler = ['--cpu-prof', '--cpu-prof-dir', dir]
  const server =
    target === 'rubrica'
      ? await startServer(`rubrica --cpu-prof (${scenario})`, [...profiler, 'dist/server.js'], rubricaEnv(port), port)
      : await startServer(`baseline --cpu-prof (${scenario})`, [...profiler, ...BASELINE_ARGS], baselineEnv(port), port)
  servers.push(server)
  let window: Window = { fromUs: 0, toUs: 0 }
  let requests = 0
  try {
    const load = {
      url: server.url,
      script: scripts[scenario],
      connections: options.connections,
      threads: options.threads,
    }
    await runWrk({ ...load, seconds: options.warmup })
    const fromUs = Number(process.hrtime.bigint() / 1000n)
    const result = await runWrk({ ...load, seconds: options.duration })
    window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) }
    requests = result.requests
    const rps = result.requests / (result.durationUs / 1e6)
    note(`profiled ${SCENARIOS[scenario].name} on ${target}: ${fixed(rps, 0)} req/s under the profiler`)
  } finally {
    await stopServer(server, 20_000)
    servers.splice(servers.indexOf(server), 1)
  }
  const written = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (!written) throw new Error(`no .cpuprofile written in ${dir}`)
  const file = join(profileRoot, `${target}-${scenario}.cpuprofile`)
  copyFileSync(join(dir, written), file)
  rmSync(dir, { recursive: true, force: true })
  return { target, scenario, file, window, readyUs: server.readyUs, requests }
}

const BASELINE_ARGS = ['--import', 'tsx', 'bench/baseline.ts']

function baselineEnv(port: number): NodeJS.ProcessEnv {
  return serviceEnv({ PORT: String(port) })
}

function rubricaEnv(port: number): NodeJS.ProcessEnv {
  return serviceEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
    LOG_LEVEL: 'warn',
    METRICS_ENABLED: 'false',
    DEMO_ON_EMPTY: 'false',
    MIGRATE_ON_START: 'false',
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Reporting

const fixed = (value: number, digits: number) => value.toFixed(digits)
const ms = (us: number) => fixed(us / 1000, 2)

function machine(pgVersion: string) {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? os.cpus()[0]?.model ?? '?'
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim()
  const dirty =
    spawnSync('git', ['status', '--porcelain', '--untracked-files=no', 'src', 'prisma'], {
      cwd: root,
      encoding: 'utf8',
    }).stdout.trim() !== ''
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return {
    nproc: os.availableParallelism(),
    cpu,
    memoryGiB: Number(fixed(os.totalmem() / 2 ** 30, 1)),
    node: process.version,
    postgres: pgVersion,
    wrk: `${wrk.stdout}${wrk.stderr}`.split('\n')[0]?.trim() ?? '?',
    commit: `${git}${dirty ? ' (with uncommitted changes in src/ or prisma/)' : ''}`,
  }
}

const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

// ---------------------------------------------------------------------------------------------------------------
// Main

const servers: Server[] = []
let workDir: string | undefined
let databaseCreated = false
let cleaning: Promise<void> | undefined

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const server of servers.splice(0)) await stopServer(server).catch(() => {})
    if (databaseCreated) {
      if (flags.keep) {
        await withClient(benchUrl, deleteBenchContacts).catch((error) => note(`could not clean up: ${error}`))
        note(`--keep: database ${options.database} kept`)
      } else {
        await dropDatabase().catch((error) => note(`could not drop ${options.database}: ${error}`))
        note(`dropped database ${options.database}`)
      }
    }
    if (workDir) rmSync(workDir, { recursive: true, force: true })
  })()
  return cleaning
}

let interrupted = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true
    note(`${signal}: stopping servers and cleaning up`)
    killWrk()
    void cleanup().finally(() => process.exit(130))
  })
}

/** Called before each load run: after a signal, nothing new starts while cleanup() runs. */
function stopIfInterrupted(): void {
  if (interrupted) throw new Error('interrupted')
}

async function main(): Promise<number> {
  const scenarioCount = ORDER.length + BASELINE_SCENARIOS.length
  const budgetSeconds =
    300 + // build, deploy, start-ups, checks
    (options.tenants * options.contacts * 3) / 1000 + // seeding (same bound as the seed command's)
    scenarioCount * (options.warmup + 35) + // warm-up
    scenarioCount * options.rounds * (options.duration + 35) +
    (flags.profile ? 5 * (options.duration + options.warmup + 90) : 0)
  const watchdog = setTimeout(() => {
    note(`the whole run exceeded its ${Math.round(budgetSeconds)} s budget: aborting`)
    void cleanup().finally(() => process.exit(1))
  }, budgetSeconds * 1000)
  watchdog.unref()

  if (spawnSync('wrk', ['-v']).error) throw new Error('wrk is not installed (Debian package wrk, /usr/bin/wrk)')
  note('building dist/ if the sources changed (scripts/build-if-needed.js)')
  const build = spawnSync(process.execPath, ['scripts/build-if-needed.js'], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) throw new Error('the build failed')

  const loadAtStart = loadavg()
  const pgVersion = await withClient(adminUrl, async (client) => {
    const result = await client.query<{ server_version: string }>('SHOW server_version')
    return result.rows[0]?.server_version ?? '?'
  })
  const host = machine(pgVersion)

  databaseCreated = true // from here on, cleanup drops it (or, with --keep, tidies it)
  const { seed, reused, seedSeconds } = await prepareDatabase()
  const { samples, depth } = await sampleTenants(seed)

  workDir = mkdtempSync(join(os.tmpdir(), 'rubrica-bench-'))
  const scripts = {} as Record<ScenarioId, string>
  for (const scenario of ORDER) {
    scripts[scenario] = join(workDir, `${scenario}.lua`)
    writeFileSync(scripts[scenario], luaScript(scenario, samples, runId))
  }

  // Start-up: spawn to first 200 on /health. The full run measures three cold starts and keeps the last server.
  const startSamples: number[] = []
  const starts = mode === 'smoke' ? 1 : 3
  let rubrica: Server | undefined
  for (let i = 0; i < starts; i++) {
    const port = await freePort()
    const server = await startServer('rubrica', ['dist/server.js'], rubricaEnv(port), port)
    startSamples.push(server.startMs)
    if (i < starts - 1) await stopServer(server)
    else rubrica = server
  }
  if (!rubrica) throw new Error('rubrica did not start')
  servers.push(rubrica)
  const baselinePort = await freePort()
  const baseline = await startServer('baseline', BASELINE_ARGS, baselineEnv(baselinePort), baselinePort)
  servers.push(baseline)
  await sleep(500)
  const idleRss = { rubrica: rssKb(rubrica.pid) / 1024, baseline: rssKb(baseline.pid) / 1024 }
  const startMedian = [...startSamples].sort((a, b) => a - b)[Math.floor((startSamples.length - 1) / 2)] ?? 0

  log()
  log(`# rubrica benchmark (${mode}): ${options.tenants} tenant(s) x ${options.contacts} contacts`)
  log()
  log(
    `NOTE: rubrica runs with RATE_LIMIT_MAX=${RATE_LIMIT_MAX}: its per-tenant rate limiter still runs on every ` +
      'request (in-process counters, no Redis) but never refuses; with the default (60 per minute) almost every ' +
      'request would get 429.',
  )
  log(
    `rubrica: node dist/server.js, NODE_ENV=production LOG_LEVEL=warn METRICS_ENABLED=false DEMO_ON_EMPTY=false ` +
      `DATABASE_POOL_SIZE=${POOL_SIZE}; baseline: node --import tsx bench/baseline.ts, same pool size.`,
  )
  log(
    `wrk: -t${options.threads} -c${options.connections} -d${options.duration}s, ${options.rounds} round(s), ` +
      `${options.warmup} s warm-up per scenario and target; database ${options.database}` +
      `${reused ? ' (reused, --keep)' : ` (seeded in ${seedSeconds.toFixed(0)} s)`}; deep cursors at rows ${depth}.`,
  )
  log(
    `machine: ${host.nproc} CPUs (${host.cpu}), ${host.memoryGiB} GiB, Node ${host.node}, PostgreSQL ${host.postgres}, ` +
      `${host.wrk}; commit ${host.commit}`,
  )

  const problems = [...(await compareAnswers(rubrica, baseline, samples)), ...(await checkWrites(rubrica, samples))]
  for (const problem of problems) log(`CHECK FAILED: ${problem}`)
  if (problems.length === 0) {
    log('checks: the baseline answers byte-identical JSON for GET by id and 5 list shapes; POST 201 and PATCH 200 ok.')
  }

  note('warming up')
  for (const scenario of ORDER) {
    for (const [target, server] of [
      ['rubrica', rubrica],
      ['baseline', baseline],
    ] as const) {
      if (target === 'baseline' && !BASELINE_SCENARIOS.includes(scenario)) continue
      stopIfInterrupted()
      await runWrk({
        url: server.url,
        script: scripts[scenario],
        seconds: options.warmup,
        connections: options.connections,
        threads: options.threads,
      })
    }
  }

  // Includes the warm-up just run; the "other CPU" column tells other people's work apart.
  const loadBefore = loadavg()
  const measurements: Measurement[] = []
  for (let round = 1; round <= options.rounds; round++) {
    for (const scenario of ORDER) {
      // rubrica and baseline alternate; in odd rounds rubrica goes first, in even rounds the baseline.
      const targets: Target[] = BASELINE_SCENARIOS.includes(scenario)
        ? round % 2 === 1
          ? ['rubrica', 'baseline']
          : ['baseline', 'rubrica']
        : ['rubrica']
      for (const target of targets) {
        note(`round ${round}: ${SCENARIOS[scenario].name} on ${target}`)
        const m = await measure(
          scenario,
          target,
          target === 'rubrica' ? rubrica : baseline,
          scripts,
          options.duration,
          round,
        )
        measurements.push(m)
        note(`  ${fixed(m.rps, 0)} req/s, p50 ${ms(m.wrk.p50)} ms, p99 ${ms(m.wrk.p99)} ms, errors ${m.errors}`)
      }
    }
  }
  const loadAfter = loadavg()

  // Profiles: rubrica and the baseline, one at a time, each alone on the machine (the bench servers are stopped).
  const profileReport: string[] = []
  if (flags.profile) {
    await stopServer(baseline)
    await stopServer(rubrica)
    servers.splice(0)
    const profileRoot = join(os.tmpdir(), `rubrica-bench-profiles-${runId}`)
    for (const scenario of ['a', 'b', 'e'] as const) {
      const r = await profileScenario('rubrica', scenario, scripts, profileRoot)
      const b = BASELINE_SCENARIOS.includes(scenario)
        ? await profileScenario('baseline', scenario, scripts, profileRoot)
        : undefined
      const rp = readProfile(r.file)
      if (scenario === 'a') {
        // rubrica's process from its first sample to its first 200 on /health.
        const startup = { fromUs: 0, toUs: r.readyUs }
        profileReport.push(
          `### CPU profile: rubrica start-up, spawn to first 200 on /health (${r.file}, window 0 ${r.readyUs})`,
          '',
          formatProfile(summariseProfile(rp, 25, startup)),
        )
      }
      // Only the measured load: start-up (module loading, schema compilation) and warm-up are left out.
      const rs = summariseProfile(rp, 25, r.window)
      profileReport.push(
        `### CPU profile: rubrica under "${SCENARIOS[scenario].name}" (${r.file}, window ${r.window.fromUs} ${r.window.toUs})`,
        '',
        formatProfile(rs, r.requests),
      )
      if (b) {
        const bs = summariseProfile(readProfile(b.file), 25, b.window)
        profileReport.push(
          `### CPU per request by package, rubrica against the baseline, "${SCENARIOS[scenario].name}" ` +
            `(baseline profile ${b.file}, window ${b.window.fromUs} ${b.window.toUs})`,
          '',
          formatComparison(
            ['rubrica', 'baseline'],
            { summary: rs, requests: r.requests },
            { summary: bs, requests: b.requests },
          ),
        )
      }
    }
  }

  // ---- the table
  const pick = (scenario: ScenarioId, target: Target) =>
    median(measurements.filter((m) => m.scenario === scenario && m.target === target))
  /**
   * x / y in req/s, as the median over rounds of the ratio within each round (the two measurements of a round ran
   * minutes apart at most, so a busy spell on a shared machine weighs on both); with one round, the plain ratio.
   */
  const paired = (x: [ScenarioId, Target], y: [ScenarioId, Target]): number | undefined => {
    const ratios: number[] = []
    for (let round = 1; round <= options.rounds; round++) {
      const a = measurements.find((m) => m.scenario === x[0] && m.target === x[1] && m.round === round)
      const b = measurements.find((m) => m.scenario === y[0] && m.target === y[1] && m.round === round)
      if (a && b && b.rps > 0) ratios.push(a.rps / b.rps)
    }
    ratios.sort((p, q) => p - q)
    return ratios[Math.floor((ratios.length - 1) / 2)]
  }
  const rows: string[] = []
  rows.push(
    '| scenario | target | req/s | p50 ms | p99 ms | errors | ratio to baseline | RSS peak MB | server CPU ms/req | ' +
      `other CPU (cores) |${options.rounds > 1 ? ' req/s range |' : ''}`,
  )
  rows.push(
    `| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${options.rounds > 1 ? ' ---: |' : ''}`,
  )
  for (const scenario of ORDER) {
    for (const target of ['rubrica', 'baseline'] as const) {
      const m = pick(scenario, target)
      if (!m) continue
      const vsBaseline = target === 'rubrica' ? paired([scenario, 'rubrica'], [scenario, 'baseline']) : undefined
      const ratio = vsBaseline === undefined ? '' : `${fixed(vsBaseline, 2)}x`
      const same = measurements.filter((x) => x.scenario === scenario && x.target === target)
      const all = same.map((x) => x.rps)
      const errors = same.reduce((sum, x) => sum + x.errors, 0)
      const rss = Math.max(...same.map((x) => x.rssPeakMb))
      const others = same.reduce((sum, x) => sum + x.otherCores, 0) / same.length
      rows.push(
        `| ${scenario}. ${SCENARIOS[scenario].name} | ${target} | ${fixed(m.rps, 0)} | ${ms(m.wrk.p50)} | ${ms(m.wrk.p99)} | ` +
          `${errors} | ${ratio} | ${fixed(rss, 0)} | ${fixed(m.cpuMsPerRequest, 3)} | ${fixed(others, 2)} |` +
          (options.rounds > 1 ? ` ${fixed(Math.min(...all), 0)}-${fixed(Math.max(...all), 0)} |` : ''),
      )
    }
  }
  log()
  for (const row of rows) log(row)
  log()
  log('Where the CPU went (medians over rounds; milliseconds of CPU per request, and cores on average):')
  log()
  log('| scenario | target | server ms/req | PostgreSQL ms/req | wrk ms/req | idle cores | other cores |')
  log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
  const mid = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor((values.length - 1) / 2)] ?? 0
  for (const scenario of ORDER) {
    for (const target of ['rubrica', 'baseline'] as const) {
      const same = measurements.filter((x) => x.scenario === scenario && x.target === target)
      if (same.length === 0) continue
      log(
        `| ${scenario}. ${SCENARIOS[scenario].name} | ${target} | ${fixed(mid(same.map((x) => x.cpuMsPerRequest)), 3)} | ` +
          `${fixed(mid(same.map((x) => x.postgresMsPerRequest)), 3)} | ${fixed(mid(same.map((x) => x.wrkMsPerRequest)), 3)} | ` +
          `${fixed(mid(same.map((x) => x.idleCores)), 2)} | ${fixed(mid(same.map((x) => x.otherCores)), 2)} |`,
      )
    }
  }
  log()
  log(
    `start (spawn to first 200 on /health): rubrica ${startSamples.map((x) => fixed(x, 0)).join(', ')} ms ` +
      `(median ${fixed(startMedian, 0)} ms); baseline ${fixed(baseline.startMs, 0)} ms`,
  )
  log(`RSS idle after start: rubrica ${fixed(idleRss.rubrica, 0)} MB, baseline ${fixed(idleRss.baseline, 0)} MB`)
  log(`load average (1, 5, 15 min): at start ${loadAtStart}; before measuring ${loadBefore}; after ${loadAfter}`)
  const busiest = Math.max(...measurements.map((m) => m.otherCores))
  if (busiest > 0.2) {
    log(
      `WARNING: the machine was shared: other processes used up to ${fixed(busiest, 2)} of ${host.nproc} CPUs during ` +
        'the scenarios (column "other CPU"); absolute figures are lower and noisier than on a quiet machine.',
    )
  }

  // ---- the targets
  const checks: { label: string; value: string; pass: boolean }[] = []
  const check = (label: string, value: string, pass: boolean) => checks.push({ label, value, pass })
  const how = options.rounds > 1 ? `median of ${options.rounds} per-round ratios` : 'one round'
  const cpuRatio = (scenario: ScenarioId) => {
    const r = pick(scenario, 'rubrica')
    const b = pick(scenario, 'baseline')
    return r && b ? `; server CPU per request ${fixed(r.cpuMsPerRequest / b.cpuMsPerRequest, 2)}x the baseline's` : ''
  }
  for (const [scenario, label] of [
    ['a', 'GET by id >= 0.7x baseline (req/s)'],
    ['b', 'list first page >= 0.7x baseline (req/s)'],
  ] as const) {
    const ratio = paired([scenario, 'rubrica'], [scenario, 'baseline'])
    if (ratio !== undefined) check(label, `${fixed(ratio, 2)}x (${how}${cpuRatio(scenario)})`, ratio >= 0.7)
  }
  const firstOverDeep = paired(['b', 'rubrica'], ['c', 'rubrica'])
  const first = pick('b', 'rubrica')
  const deep = pick('c', 'rubrica')
  if (firstOverDeep !== undefined && first && deep) {
    check(
      'list at 90% depth within 1.2x of the first page (by req/s: first / deep <= 1.2)',
      `${fixed(firstOverDeep, 2)}x (${how}; medians ${fixed(deep.rps, 0)} vs ${fixed(first.rps, 0)} req/s, ` +
        `p50 ${ms(deep.wrk.p50)} vs ${ms(first.wrk.p50)} ms)`,
      firstOverDeep <= 1.2,
    )
  }
  const postOverGet = paired(['e', 'rubrica'], ['a', 'rubrica'])
  const get = pick('a', 'rubrica')
  const post = pick('e', 'rubrica')
  if (postOverGet !== undefined && get && post) {
    check(
      'POST >= 0.5x GET by id (req/s)',
      `${fixed(postOverGet, 2)}x (${how}; server CPU per request ${fixed(post.cpuMsPerRequest, 2)} vs ` +
        `${fixed(get.cpuMsPerRequest, 2)} ms)`,
      postOverGet >= 0.5,
    )
  }
  const rssPeak = Math.max(...measurements.filter((m) => m.target === 'rubrica').map((m) => m.rssPeakMb))
  check('RSS under load < 150 MB (rubrica, peak over all scenarios)', `${fixed(rssPeak, 0)} MB`, rssPeak < 150)
  check('start < 1 s (spawn to first 200 on /health, median)', `${fixed(startMedian, 0)} ms`, startMedian < 1000)
  if (mode === 'large') {
    for (const scenario of ['b', 'c', 'd'] as const) {
      const m = pick(scenario, 'rubrica')
      if (m) {
        check(
          `${SCENARIOS[scenario].name}: p99 < 20 ms at ${options.connections} connections`,
          `${ms(m.wrk.p99)} ms`,
          m.wrk.p99 < 20_000,
        )
      }
    }
  }
  log()
  log('targets (reported, not asserted):')
  for (const c of checks) log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.label}: ${c.value}`)
  const scenarioErrors = measurements.reduce((sum, m) => sum + m.errors, 0)
  if (scenarioErrors > 0) {
    log()
    log(`ERRORS during scenarios: ${scenarioErrors} (connect/read/write/timeout errors and statuses >= 400):`)
    for (const m of measurements.filter((x) => x.errors > 0)) {
      const w = m.wrk
      log(
        `  ${m.scenario} ${m.target} round ${m.round}: status>=400 ${w.status}, connect ${w.connect}, read ${w.read}, ` +
          `write ${w.write}, timeout ${w.timeout}`,
      )
    }
  }
  if (profileReport.length > 0) {
    log()
    log(profileReport.join('\n'))
  }

  if (flags.out) {
    writeFileSync(
      resolve(flags.out),
      `${JSON.stringify(
        {
          mode,
          options,
          machine: host,
          load: { atStart: loadAtStart, beforeMeasuring: loadBefore, after: loadAfter },
          seed: { reused, seconds: seedSeconds, deepCursorRows: depth },
          startMs: { rubrica: startSamples, baseline: baseline.startMs },
          idleRssMb: idleRss,
          measurements,
          checks,
          problems,
          profiles: profileReport.join('\n'),
        },
        null,
        2,
      )}\n`,
    )
  }
  if (mode === 'smoke' && (scenarioErrors > 0 || problems.length > 0)) return 1
  return 0
}

let exitCode = 1
try {
  exitCode = await main()
} catch (error) {
  if (interrupted) {
    exitCode = 130
  } else {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    for (const server of servers) process.stderr.write(`--- last output of ${server.name}:\n${server.output()}\n`)
    exitCode = 1
  }
} finally {
  await cleanup()
}
process.exit(exitCode)
