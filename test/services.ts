// Private PostgreSQL and Redis servers for fault-injection tests: started from the Debian binaries on free
// ports in a temporary directory, so that a test can stop and restart them without touching the machine's
// shared servers.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const PG_BIN = '/usr/lib/postgresql/15/bin'
const isRoot = process.getuid?.() === 0

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** PostgreSQL refuses to run as root: run its binaries as the postgres user then. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
}

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

export interface PrivateServer {
  url: string
  port: number
  start(): Promise<void>
  /** Stops the server abruptly, as a crash would. */
  kill(): Promise<void>
  stop(): Promise<void>
}

export async function startPostgres(settings: string[] = []): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rubrica-pg-'))
  chmodSync(dir, 0o777)
  const dataDir = join(dir, 'data')
  const port = await freePort()
  const [initdb, initArgs] = asPostgres(join(PG_BIN, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust'])
  execFileSync(initdb, initArgs, { stdio: 'ignore' })
  let child: ChildProcess | null = null
  const ready = () => {
    try {
      execFileSync(join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  }
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      const [postgres, args] = asPostgres(join(PG_BIN, 'postgres'), [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${dir}`,
        '-c',
        'fsync=off',
        ...settings.flatMap((setting) => ['-c', setting]),
      ])
      child = spawn(postgres, args, { stdio: 'ignore' })
      await waitUntil(ready, `PostgreSQL on port ${port}`)
    },
    async kill() {
      const running = child
      if (!running || running.exitCode !== null || running.signalCode !== null) return
      const exited = new Promise((resolve) => running.once('exit', resolve))
      // Immediate shutdown: every backend exits at once without a checkpoint, as in a crash.
      const [pgCtl, args] = asPostgres(join(PG_BIN, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate'])
      execFileSync(pgCtl, args, { stdio: 'ignore' })
      await exited
      await waitUntil(() => !ready(), 'PostgreSQL to stop')
    },
    async stop() {
      await server.kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}

export async function startRedis(): Promise<PrivateServer> {
  const port = await freePort()
  let child: ChildProcess | null = null
  const ready = () => {
    try {
      return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG'
    } catch {
      return false
    }
  }
  const server: PrivateServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      )
      await waitUntil(ready, `Redis on port ${port}`)
    },
    async kill() {
      const running = child
      if (!running || running.exitCode !== null || running.signalCode !== null) return
      const exited = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await exited
    },
    async stop() {
      await server.kill()
    },
  }
  await server.start()
  return server
}

export interface PrivateCitus {
  /** The coordinator's `postgres` database, with Citus, its workers registered. */
  url: string
  coordinator: PrivateServer
  workers: PrivateServer[]
  /** Servers with Citus installed and the extension created, not yet added to the cluster. */
  spares: PrivateServer[]
  stop(): Promise<void>
}

/**
 * A Citus cluster of its own (a coordinator and two workers, each a private PostgreSQL with the extension), for a
 * test that stops a node or moves shards: the machine's shared cluster serves the other tests meanwhile. With
 * `spares`, that many more servers are ready to be added as workers (citus_add_node), and fewer are registered.
 */
export async function startCitus(options: { spares?: number } = {}): Promise<PrivateCitus> {
  const settings = [
    'shared_preload_libraries=citus',
    'citus.enable_unsafe_triggers=on',
    'citus.shard_count=4',
    'citus.node_connection_timeout=2000',
    'max_connections=100',
  ]
  const spareCount = options.spares ?? 0
  const servers = await Promise.all([0, 1, 2].map(() => startPostgres(settings)))
  const [coordinator, ...others] = servers
  if (!coordinator) throw new Error('no coordinator')
  const workers = others.slice(0, others.length - spareCount)
  const spares = others.slice(others.length - spareCount)
  const psql = (server: PrivateServer, sql: string) =>
    execFileSync('psql', ['-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', '-qAtc', sql, 'postgres'])
  for (const server of servers) psql(server, 'CREATE EXTENSION citus')
  psql(coordinator, `SELECT citus_set_coordinator_host('127.0.0.1', ${coordinator.port})`)
  for (const worker of workers) psql(coordinator, `SELECT citus_add_node('127.0.0.1', ${worker.port})`)
  return {
    url: coordinator.url,
    coordinator,
    workers,
    spares,
    async stop() {
      await Promise.all(servers.map((server) => server.stop()))
    },
  }
}
