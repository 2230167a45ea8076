// Child processes of the harness: commands run to completion (the admin CLI), and the two servers under test,
// rubrica (dist/server.js) and the baseline (bench/baseline.ts), started on free ports and stopped; plus the
// HTTP client the checks use. Every child is tracked and killed when the harness exits, however it exits.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import os from 'node:os'
import { dirname, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { freePort } from '../test/services.ts'
import { killWrk } from './wrk.ts'

/** The repository: every child runs there. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** rubrica's default DATABASE_POOL_SIZE; the baseline gets the same. */
export const POOL_SIZE = 4
/** High enough never to refuse: rubrica's rate limiter still counts every request, as in production. */
export const RATE_LIMIT_MAX = 1_000_000_000

const children = new Set<ChildProcess>()
process.on('exit', () => {
  killWrk()
  for (const child of children) if (!hasExited(child)) child.kill('SIGKILL')
})

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

export const sleep = (ms: number) => new Promise((resolvePromise) => setTimeout(resolvePromise, ms))

/** Builds dist/ when the sources changed (the admin CLI that seeds, and rubrica itself, run from it). */
export function buildIfNeeded(): void {
  const build = spawnSync(process.execPath, ['scripts/build-if-needed.js'], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) throw new Error('the build failed')
}

/** Runs a command to completion; resolves with its stdout, rejects on a non-zero exit or after `timeoutMs`. */
export function runCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<string> {
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
): Promise<HttpAnswer> {
  return new Promise((resolvePromise, reject) => {
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
  port: number
  url: string
  /** Spawn to first 200 on /health, in milliseconds. */
  startMs: number
  output: () => string
}

/** Servers started and not stopped yet: cleanup stops them, a failure prints their last output. */
const running: Server[] = []

export const runningServers = (): readonly Server[] => running

/** Spawns `node args…` and waits (30 s at most) for its first 200 on /health. */
async function startServer(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  cwd = root,
): Promise<Server> {
  let output = ''
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const url = `http://127.0.0.1:${port}`
  const deadline = started + 30_000
  while (performance.now() < deadline && !hasExited(child)) {
    const answer = await http(`${url}/health`, 'GET', {}, undefined, 1000).catch(() => null)
    if (answer?.status === 200) {
      const startMs = performance.now() - started
      const server = { name, child, pid: child.pid ?? 0, port, url, startMs, output: () => output }
      running.push(server)
      return server
    }
    await sleep(10)
  }
  child.kill('SIGKILL')
  throw new Error(`${name} did not answer 200 on /health within 30 s:\n${output}`)
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopServer(server: Server, graceMs = 10_000): Promise<void> {
  const { child } = server
  if (running.includes(server)) running.splice(running.indexOf(server), 1)
  if (hasExited(child)) {
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

export async function stopAllServers(): Promise<void> {
  for (const server of [...running]) await stopServer(server).catch(() => {})
}

// ---------------------------------------------------------------------------------------------------------------
// The targets of the load: rubrica and the baseline on one database, and with --citus the same two again on the
// Citus cluster's database

export type Implementation = 'rubrica' | 'baseline'
/**
 * An implementation on the PostgreSQL bench database, or (`-citus`) on the Citus one; `rubrica-before` is another
 * build of rubrica (--before) on the PostgreSQL database, measured in the same rounds.
 */
export type Target = Implementation | `${Implementation}-citus` | 'rubrica-before'
/** The two implementations on one database. */
export type Targets = Record<Implementation, Server>

/** The implementation a target runs. */
export const implementationOf = (target: Target): Implementation =>
  target.startsWith('rubrica') ? 'rubrica' : 'baseline'

const BASELINE_ARGS = ['--import', 'tsx', 'bench/baseline.ts']

function targetEnv(target: Implementation, databaseUrl: string, port: number): NodeJS.ProcessEnv {
  if (target === 'baseline') return serviceEnv(databaseUrl, { PORT: String(port) })
  return serviceEnv(databaseUrl, {
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
    LOG_LEVEL: 'warn',
    METRICS_ENABLED: 'false',
    DEMO_ON_EMPTY: 'false',
    MIGRATE_ON_START: 'false',
  })
}

/** Starts rubrica or the baseline on a free port; `nodeFlags` go to node itself (e.g. --cpu-prof). */
export async function startTarget(
  target: Implementation,
  databaseUrl: string,
  nodeFlags: string[] = [],
  name: string = target,
): Promise<Server> {
  const port = await freePort()
  const script = target === 'rubrica' ? ['dist/server.js'] : BASELINE_ARGS
  return startServer(name, [...nodeFlags, ...script], targetEnv(target, databaseUrl, port), port)
}

/**
 * Starts the build of rubrica in `checkout` (a clone or worktree of an earlier commit, built with `npm run build`)
 * on the bench database, as rubrica is started: its own dist/server.js and node_modules, the same environment.
 */
export async function startBefore(
  checkout: string,
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<Server> {
  const port = await freePort()
  const env = { ...targetEnv('rubrica', databaseUrl, port), ...extra }
  return startServer('rubrica-before', ['dist/server.js'], env, port, checkout)
}

/**
 * Starts rubrica `coldStarts` times, each measured from spawn to first 200 on /health, and keeps the last one
 * running; then the baseline.
 */
export async function startTargets(databaseUrl: string, coldStarts: number, suffix = '') {
  const rubricaStartMs: number[] = []
  let rubrica: Server | undefined
  for (let i = 0; i < coldStarts; i++) {
    const server = await startTarget('rubrica', databaseUrl, [], `rubrica${suffix}`)
    rubricaStartMs.push(server.startMs)
    if (i < coldStarts - 1) await stopServer(server)
    else rubrica = server
  }
  if (!rubrica) throw new Error('rubrica did not start')
  const baseline = await startTarget('baseline', databaseUrl, [], `baseline${suffix}`)
  const targets: Targets = { rubrica, baseline }
  return { targets, rubricaStartMs }
}
