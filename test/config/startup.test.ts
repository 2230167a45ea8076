// Starting as a first-time user and an operator do: every failure to start ends in one line that says what to
// do, whatever DEMO_ON_EMPTY says; the demo key is never lost; a crashed embedded database is taken over at once
// and keeps what it acknowledged. Each cause is produced for real (a stopped port, a wrong user, a taken port…)
// and described in-process; a few go through the real entry point for the exit code and the absence of a stack.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { PRINTED_KEY } from '../../src/auth/api-key.ts'
import { runCli } from '../../src/cli/main.ts'
import { type Config, loadConfig } from '../../src/config/config.ts'
import { describeStartupFailure } from '../../src/config/startup-failure.ts'
import { lockDataDir } from '../../src/db/data-dir.ts'
import { type Started, start, waitFor } from '../process.ts'
import { startPostgres } from '../services.ts'

const LISTENING = /Server listening at (http:\/\/[^"\s]+)/

// One private PostgreSQL for the file: starts on it need no embedded initdb, so they take a second or two.
const postgres = await startPostgres()
t.teardown(() => postgres.stop())

/** A new database on the private server, migrated by the CLI unless `migrated` is false; its URL. */
async function database(name: string, migrated = true): Promise<string> {
  const admin = new pg.Client({ connectionString: postgres.url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(postgres.url)
  url.pathname = `/${name}`
  if (migrated) {
    const code = await runCli(['db', 'deploy'], {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: { DATABASE_URL: url.toString() },
    })
    if (code !== 0) throw new Error(`could not migrate ${name}`)
  }
  return url.toString()
}

async function temporaryDir(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A port held by another server for the test's duration. */
async function takenPort(t: Test): Promise<number> {
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => holder.close(resolve)))
  const address = holder.address()
  return typeof address === 'object' && address ? address.port : 0
}

/** What src/server.ts does, in-process: configuration, build, listen; the line it would print on failure. */
async function startFailure(t: Test, env: Record<string, string>): Promise<string> {
  let config: Config | undefined
  try {
    config = loadConfig({
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
      ...env,
    })
    const app = await buildApp(config)
    t.teardown(() => app.close())
    await app.listen({ host: config.HOST, port: config.PORT })
  } catch (error) {
    return describeStartupFailure(error, config)
  }
  return 'started'
}

/** The one line a failed start of the real entry point printed, after checking exit code and stack. */
async function failure(t: Test, started: Started, what: string): Promise<string> {
  t.equal(await started.exited, 1, `${what}: exit code 1`)
  const output = started.output()
  t.notMatch(output, /\n\s+at .+:\d+:\d+/, `${what}: no stack trace`)
  const lines = output.split('\n').filter((line) => line.startsWith('rubrica: could not start: '))
  t.equal(lines.length, 1, `${what}: one line saying why`)
  return lines[0] ?? ''
}

t.test('each cause of a failed start is one line that says what to do', async (t) => {
  await database('unmigrated', false)
  const migrated = await database('ports')
  const broken = await database('broken')
  const admin = new pg.Client({ connectionString: broken })
  await admin.connect()
  await admin.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ('x', 'x', 'zzz_broken')`)
  await admin.end()
  const dir = await temporaryDir(t, 'rubrica-start-')
  const file = join(dir, 'a-file')
  await writeFile(file, 'not a folder')
  const port = await takenPort(t)
  const at = (change: (url: URL) => void) => {
    const url = new URL(postgres.url)
    change(url)
    return url.toString()
  }
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'PostgreSQL unreachable',
      { DATABASE_URL: at((u) => (u.port = '1')) },
      /cannot reach PostgreSQL at 127\.0\.0\.1:1 .*DATABASE_URL/,
    ],
    [
      'wrong user',
      { DATABASE_URL: at((u) => (u.username = 'nobody')) },
      /refused the credentials: check the user and password/,
    ],
    [
      'missing database',
      { DATABASE_URL: at((u) => (u.pathname = '/nothing_here')) },
      /database does not exist\. Create it/,
    ],
    [
      'not migrated',
      { DATABASE_URL: at((u) => (u.pathname = '/unmigrated')) },
      /not up to date .*npm run db:deploy.*MIGRATE_ON_START=true/,
    ],
    [
      'not migrated, no demo',
      { DATABASE_URL: at((u) => (u.pathname = '/unmigrated')), DEMO_ON_EMPTY: 'false' },
      /not up to date/,
    ],
    ['DATA_DIR is a file', { DATA_DIR: file }, /DATA_DIR .* cannot hold the embedded database: it is not a folder/],
    ['DATA_DIR under a file', { DATA_DIR: join(file, 'data') }, /it is not a folder/],
    [
      'port in use',
      { DATABASE_URL: migrated, PORT: String(port) },
      new RegExp(`127\\.0\\.0\\.1:${port} is already in use`),
    ],
    [
      'metrics port in use',
      { DATABASE_URL: migrated, METRICS_ENABLED: 'true', METRICS_PORT: String(port) },
      /metrics port \d+ .* already in use: set METRICS_PORT/,
    ],
    [
      'a wrong setting',
      { DATABASE_URL: migrated, LOG_LEVEL: 'loud' },
      /LOG_LEVEL: "loud" is not valid; expected one of fatal/,
    ],
  ]
  cases.push(
    ['HOST unresolvable', { DATABASE_URL: migrated, HOST: 'bogus.invalid' }, /HOST bogus\.invalid cannot be resolved/],
    ['a port spelled as a float', { DATABASE_URL: migrated, PORT: '3e4' }, /PORT: "3e4" is not valid/],
    [
      'a URL that does not parse, with a password',
      { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:99999/x' },
      /DATABASE_URL: "postgres:\/\/app:\*\*\*@127\.0\.0\.1:99999\/x" is not valid/,
    ],
    [
      'DATA_DIR under /proc',
      { DATA_DIR: '/proc/rubrica' },
      /DATA_DIR \/proc\/rubrica cannot hold the embedded database/,
    ],
    ['a migration that failed', { DATABASE_URL: broken }, /zzz_broken failed earlier .*P3009.*prisma migrate resolve/],
  )
  for (const [what, env, expected] of cases) t.match(await startFailure(t, env), expected, what)

  const started = start({ DATABASE_URL: at((u) => (u.pathname = '/unmigrated')) })
  t.teardown(() => started.child.kill('SIGKILL'))
  t.match(await failure(t, started, 'the real entry point'), /not up to date/, 'prints the same line, exits 1')
})

t.test('the embedded database held by a live process: the server and the CLI refuse in one line', async (t) => {
  const dataDir = await temporaryDir(t, 'rubrica-held-')
  const release = await lockDataDir(dataDir)
  t.teardown(release)
  const second = start({ DATA_DIR: dataDir })
  t.teardown(() => second.child.kill('SIGKILL'))
  t.match(await failure(t, second, 'locked by a live process'), /in use by another rubrica process/)
  let stderr = ''
  const code = await runCli(['tenant', 'list'], {
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    env: { DATA_DIR: dataDir },
  })
  t.equal(code, 1, 'the CLI too')
  t.match(stderr, /^error: The embedded database in .* is in use by another rubrica process/)
})

t.test('the demo is made only once the server listens, and a never-used key is pointed out', async (t) => {
  const url = await database('demo')
  const port = await takenPort(t)
  const blocked = start({ DATABASE_URL: url, PORT: String(port) })
  t.teardown(() => blocked.child.kill('SIGKILL'))
  await failure(t, blocked, 'port in use on the first start')
  t.notMatch(blocked.output(), /svc_/, 'no key was shown')

  const first = start({ DATABASE_URL: url })
  t.teardown(() => first.child.kill('SIGKILL'))
  const [, key] = await waitFor(first, new RegExp(`Bearer (${PRINTED_KEY.source})`))
  t.ok(key, 'the next start makes the demo and shows its key: it was not made by the failed start')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const later = start({ DATABASE_URL: url })
  t.teardown(() => later.child.kill('SIGKILL'))
  const [hint] = await waitFor(later, /The demo key \(…\w{4}\) .* never been used.*\n/)
  t.match(hint, /npx rubrica key create --tenant [0-9a-f-]{36} --role admin/, 'says how to make another')
  t.notMatch(later.output(), PRINTED_KEY, 'without showing any key')
  later.child.kill('SIGTERM')
  t.equal(await later.exited, 0)
})

t.test('kill -9 and an immediate restart: the lock is taken over, acknowledged writes are there', async (t) => {
  const dataDir = await temporaryDir(t, 'rubrica-crash-')
  const first = start({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000' })
  t.teardown(() => first.child.kill('SIGKILL'))
  const [, key, list] = await waitFor(first, new RegExp(`Bearer (${PRINTED_KEY.source})' (\\S+)`))
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const acknowledged: string[] = []
  let writing = true
  const writer = async (lane: number) => {
    for (let i = 0; writing; i++) {
      const email = `crash-${lane}-${i}@x.io`
      const res = await fetch(list as string, { method: 'POST', headers, body: JSON.stringify({ email }) }).catch(
        () => null,
      )
      if (res?.status === 201) acknowledged.push(email)
      else break
    }
  }
  const writers = [0, 1, 2, 3].map(writer)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  first.child.kill('SIGKILL')
  await first.exited
  writing = false
  await Promise.all(writers)
  t.ok(acknowledged.length > 10, `${acknowledged.length} creates acknowledged before the kill`)

  const restartedAt = Date.now()
  const second = start({ DATA_DIR: dataDir, LOG_LEVEL: 'info' })
  t.teardown(() => second.child.kill('SIGKILL'))
  const [, url] = await waitFor(second, LISTENING, 30_000)
  t.ok(Date.now() - restartedAt < 30_000, `listening again ${Date.now() - restartedAt} ms after the restart`)
  t.notMatch(second.output(), /in use by another/, 'the dead owner did not block it')
  const stored = new Set<string>()
  let next: string | null = null
  do {
    const page = (await (
      await fetch(`${url}/api/v1/contacts?limit=200${next ? `&cursor=${next}` : ''}`, { headers })
    ).json()) as { data: { email: string }[]; next: string | null }
    for (const contact of page.data) stored.add(contact.email)
    next = page.next
  } while (next)
  t.same(
    acknowledged.filter((email) => !stored.has(email)),
    [],
    'every acknowledged create is there',
  )
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})
