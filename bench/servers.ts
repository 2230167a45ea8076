// Child processes of the benches: commands run to completion (the admin CLI, wrk), servers started on free ports
// and stopped, and the HTTP client of the checks. Every child is tracked and killed when the bench exits, however
// it exits.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import os from 'node:os'
import { dirname, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort } from '../test/services.ts'

/** The repository: every child runs there. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** rubrica's default DATABASE_POOL_SIZE; the baseline gets the same. */
export const POOL_SIZE = 4
/** High enough never to refuse: rubrica's rate limiter still counts every request, as in production. */
export const RATE_LIMIT_MAX = 1_000_000_000

/** Where the results go (stdout) and the progress notes (stderr); the number formats both use. */
export const log = (line = '') => process.stdout.write(`${line}\n`)
export const note = (line: string) => process.stderr.write(`[bench] ${line}\n`)
export const fixed = (value: number, digits: number) => value.toFixed(digits)
/** Microseconds (wrk's latencies) as milliseconds. */
export const ms = (us: number) => fixed(us / 1000, 2)

/** The middle value; of an even count, the lower of the two middle ones. */
export function median(values: readonly number[]): number | undefined {
  return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
}

export const sleep = (ms: number) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms))

const children = new Set<ChildProcess>()
const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null
process.on('exit', () => {
  for (const child of children) if (!hasExited(child)) child.kill('SIGKILL')
})

/** Builds dist/ when the sources changed (the admin CLI that seeds, and rubrica itself, run from it). */
export function buildIfNeeded(): void {
  const build = spawnSync(process.execPath, ['scripts/build-if-needed.js'], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) throw new Error('the build failed')
}

const execFileAsync = promisify(execFile)

/**
 * Runs a command to completion; resolves with its stdout, rejects on a non-zero exit or after `timeoutMs`.
 * `onStart` is told its pid (to sample its CPU).
 */
export async function runCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  onStart?: (pid: number) => void,
) {
  const run = execFileAsync(command, args, { cwd: root, env, timeout: timeoutMs, killSignal: 'SIGKILL' })
  children.add(run.child)
  if (run.child.pid !== undefined) onStart?.(run.child.pid)
  try {
    return (await run).stdout
  } finally {
    children.delete(run.child)
  }
}

/** The environment of rubrica's processes: only what they need, nothing inherited by accident (REDIS_URL…). */
export function serviceEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? os.tmpdir(),
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    ...extra,
  }
}

export interface HttpAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

export function http(
  url: string,
  method = 'GET',
  headers: Record<string, string> = {},
  body?: string,
  timeoutMs = 5000,
) {
  return new Promise<HttpAnswer>((resolvePromise, reject) => {
    const sent = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
    const req = httpRequest(url, { method, headers: sent, agent: false, timeout: timeoutMs }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

export interface Server {
  name: string
  child: ChildProcess
  pid: number
  url: string
  /** Spawn to first 200 on /health, in milliseconds. */
  startMs: number
  output: () => string
}

/** Servers started and not stopped yet: cleanup stops them, a failure prints their last output. */
const running: Server[] = []
export const runningServers = (): readonly Server[] => running

/** Spawns `node args…` on a free port (env's PORT) and waits, 60 s at most, for its first 200 on /health. */
export async function startServer(
  name: string,
  args: string[],
  env: (port: number) => NodeJS.ProcessEnv,
  cwd = root,
): Promise<Server> {
  const port = await freePort()
  let output = ''
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd, env: env(port), stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const url = `http://127.0.0.1:${port}`
  while (performance.now() < started + 60_000 && !hasExited(child)) {
    const answer = await http(`${url}/health`, 'GET', {}, undefined, 1000).catch(() => null)
    if (answer?.status === 200) {
      const server = {
        name,
        child,
        pid: child.pid ?? 0,
        url,
        startMs: performance.now() - started,
        output: () => output,
      }
      running.push(server)
      return server
    }
    await sleep(10)
  }
  child.kill('SIGKILL')
  throw new Error(`${name} did not answer 200 on /health within 60 s:\n${output}`)
}

/** SIGTERM, then SIGKILL after 10 s. */
export async function stopServer(server: Server): Promise<void> {
  const { child } = server
  if (running.includes(server)) running.splice(running.indexOf(server), 1)
  if (!hasExited(child)) {
    const exited = new Promise((resolvePromise) => child.once('exit', resolvePromise))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  children.delete(child)
}

export async function stopAllServers(): Promise<void> {
  for (const server of [...running]) await stopServer(server).catch(() => {})
}

// The targets of the load: rubrica and the baseline on one database, and with --citus the same two again on the
// Citus cluster's database.

export type Implementation = 'rubrica' | 'baseline'
/**
 * An implementation on the PostgreSQL bench database, or (`-citus`) on the Citus one; `rubrica-before` is another
 * build of rubrica (--before) on the PostgreSQL database, measured in the same rounds.
 */
export type Target = Implementation | `${Implementation}-citus` | 'rubrica-before'
/** The two implementations on one database. */
export type Targets = Record<Implementation, Server>

/** rubrica (dist/server.js) as the benches run it; `extra` adds to or overrides its environment. */
export const rubricaEnv =
  (databaseUrl: string, extra: Record<string, string> = {}) =>
  (port: number) =>
    serviceEnv(databaseUrl, {
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
      LOG_LEVEL: 'warn',
      METRICS_ENABLED: 'false',
      DEMO_ON_EMPTY: 'false',
      MIGRATE_ON_START: 'false',
      ...extra,
    })

/**
 * Starts the build of rubrica in `checkout` (this one, or a clone or worktree of an earlier commit built with
 * `npm run build`): its own dist/server.js and node_modules, the same environment.
 */
export function startRubrica(name: string, databaseUrl: string, checkout = root, extra: Record<string, string> = {}) {
  return startServer(name, ['dist/server.js'], rubricaEnv(databaseUrl, extra), checkout)
}

/**
 * rubrica's sources under tsx, as bench/import.ts and bench/batch-load.ts run them: the bench's own environment
 * passed on (BATCH_CONCURRENCY, DATABASE_POOL_SIZE…), the request log at info; `database` is DATABASE_URL or DATA_DIR.
 */
export function startSources(database: Record<string, string>): Promise<Server> {
  const env = (port: number) => ({
    ...process.env,
    ...database,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    RATE_LIMIT_MAX: '1000000',
    WEBHOOKS_ENABLED: 'false',
    DEMO_ON_EMPTY: 'false',
  })
  return startServer('rubrica', ['--import', 'tsx', 'src/server.ts'], env)
}

/**
 * Starts rubrica `coldStarts` times, each measured from spawn to first 200 on /health, and keeps the last one
 * running; then the baseline (bench/baseline.ts).
 */
export async function startTargets(databaseUrl: string, coldStarts: number, suffix = '') {
  const rubricaStartMs: number[] = []
  let rubrica = await startRubrica(`rubrica${suffix}`, databaseUrl)
  rubricaStartMs.push(rubrica.startMs)
  for (let i = 1; i < coldStarts; i++) {
    await stopServer(rubrica)
    rubrica = await startRubrica(`rubrica${suffix}`, databaseUrl)
    rubricaStartMs.push(rubrica.startMs)
  }
  const baselineEnv = (port: number) => serviceEnv(databaseUrl, { PORT: String(port) })
  const baseline = await startServer(`baseline${suffix}`, ['--import', 'tsx', 'bench/baseline.ts'], baselineEnv)
  const targets: Targets = { rubrica, baseline }
  return { targets, rubricaStartMs }
}
