// Every database connection of the server cut, a dozen times, while requests of every kind run and the admin
// CLI writes: what a PostgreSQL failover, a restart, a pooler or an idle timeout does (issue #22: a connection
// lost while checked out of the pool, inside an Idempotency-Key's transaction, ended the process). The server runs
// as a child process and is spoken to over real sockets, so a crash or a cut socket is seen as a client sees it.
import pg from 'pg'
import t from 'tap'
import { runCli } from '../../src/cli/main.ts'
import { start, waitFor } from '../process.ts'
import { startPostgres } from '../services.ts'

const CUTS = 12
const CUT_EVERY_MS = 400

async function cli(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = { code: -1, stdout: '', stderr: '' }
  run.code = await runCli(argv, {
    stdout: { write: (text: string) => (run.stdout += text) },
    stderr: { write: (text: string) => (run.stderr += text) },
    env,
  })
  return run
}

async function json<T>(argv: string[], env: Record<string, string>): Promise<T> {
  const run = await cli([...argv, '--json'], env)
  if (run.code !== 0) throw new Error(`rubrica ${argv.join(' ')}: ${run.stderr}`)
  return JSON.parse(run.stdout) as T
}

interface Outcome {
  kind: string
  status: number | 'socket'
  code?: string
}

t.test('connections cut under load: 503 or success, never a crash or a cut socket', async (t) => {
  const postgres = await startPostgres()
  t.teardown(() => postgres.stop())
  const env = { DATABASE_URL: postgres.url }
  await json(['db', 'deploy'], env)
  const tenant = await json<{ id: string }>(['tenant', 'create', '--name', 'Guasti'], env)
  const scopes = 'contacts:read,contacts:write'
  const issued = await json<{ key: string }>(
    ['key', 'create', '--tenant', tenant.id, '--role', 'admin', '--scopes', scopes],
    env,
  )

  const server = start({
    ...env,
    DEMO_ON_EMPTY: 'false',
    RATE_LIMIT_MAX: '1000000',
    // A small pool that requests wait for: a connection handed from a finished query straight to a waiting
    // transaction is the moment an outsider found the process still ending (the cut arrived with the handover).
    DATABASE_POOL_SIZE: '2',
    DATABASE_CONNECT_TIMEOUT_MS: '2000',
  })
  t.teardown(() => server.child.kill('SIGKILL'))
  const base = `${(await waitFor(server, /Server listening at (http:\/\/[^"\s]+)/))[1]}/api/v1/contacts`
  const headers = { authorization: `Bearer ${issued.key}`, 'content-type': 'application/json' }

  const outcomes: Outcome[] = []
  const acknowledged: string[] = []
  let sequence = 0
  const call = async (kind: string, url: string, init: RequestInit = {}) => {
    try {
      const res = await fetch(url, { ...init, headers: { ...headers, ...(init.headers as object) } })
      const text = await res.text()
      const body = text ? (JSON.parse(text) as { id?: string; error?: { code: string; message: string } }) : {}
      outcomes.push({ kind, status: res.status, code: body.error?.code })
      return { status: res.status, body, etag: res.headers.get('etag') }
    } catch {
      outcomes.push({ kind, status: 'socket' })
      return null
    }
  }
  const create = async (kind: string, extra: Record<string, string> = {}) => {
    const n = sequence++
    const res = await call(kind, base, {
      method: 'POST',
      body: JSON.stringify({ email: `c${n}@guasti.it` }),
      headers: extra,
    })
    if (res?.status === 201 && res.body.id) acknowledged.push(res.body.id)
    return res
  }

  // One contact per PATCH worker, so that its If-Match is stale only when its own earlier PATCH committed
  // behind a 503 (then it reads the contact again).
  const own = await create('setup')
  if (!own?.body.id) throw new Error('could not create the PATCH worker’s contact')
  const patchUrl = `${base}/${own.body.id}`
  let etag = own.etag ?? '*'

  let running = true
  const repeat = <T>(times: number, worker: () => Promise<T>) => Array.from({ length: times }, () => worker)
  const workers = [
    ...repeat(3, async () => {
      while (running) await create('POST')
    }),
    ...repeat(4, async () => {
      while (running) await create('POST+Idempotency-Key', { 'idempotency-key': `k-${sequence++}` })
    }),
    async () => {
      while (running) {
        const stage = sequence++ % 2 === 0 ? 'customer' : 'prospect'
        const res = await call('PATCH+If-Match', patchUrl, {
          method: 'PATCH',
          body: JSON.stringify({ stage }),
          headers: { 'if-match': etag },
        })
        if (res?.status === 200 && res.etag) etag = res.etag
        else if (res?.status === 412) etag = (await call('GET', patchUrl))?.etag ?? etag
      }
    },
    ...repeat(4, async () => {
      while (running) {
        await call('list', `${base}?limit=20`)
        await call('GET', patchUrl)
      }
    }),
    async () => {
      // The admin CLI as another writer, with connections of its own that are cut too.
      while (running) {
        const run = await cli(['contact', 'archive', '--tenant', tenant.id, own.body.id as string], env)
        outcomes.push({ kind: 'CLI', status: run.code === 0 ? 0 : 1, code: run.stderr.trim() })
        await cli(['contact', 'unarchive', '--tenant', tenant.id, own.body.id as string], env)
      }
    },
  ]
  const running_ = workers.map((worker) => worker())

  const admin = new pg.Client({ connectionString: postgres.url })
  await admin.connect()
  t.teardown(() => admin.end())
  let terminated = 0
  for (let cut = 0; cut < CUTS; cut++) {
    await new Promise((resolve) => setTimeout(resolve, CUT_EVERY_MS))
    const { rowCount } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = $1',
      ['client backend'],
    )
    terminated += rowCount ?? 0
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  running = false
  await Promise.all(running_)

  t.ok(terminated >= CUTS, `${terminated} backends terminated in ${CUTS} cuts`)
  t.equal(server.child.exitCode, null, 'the server is still running')
  const requests = outcomes.filter((o) => o.kind !== 'CLI' && o.kind !== 'setup')
  const tally = new Map<string, number>()
  for (const o of requests) tally.set(`${o.kind} ${o.status}`, (tally.get(`${o.kind} ${o.status}`) ?? 0) + 1)
  t.comment(`answers: ${JSON.stringify(Object.fromEntries(tally))}`)
  t.same(
    requests.filter((o) => o.status === 'socket'),
    [],
    'no request got a cut socket',
  )
  const allowed = new Set([200, 201, 412, 503])
  const unexpected = requests.filter((o) => !allowed.has(o.status as number))
  t.same(unexpected, [], 'every answer is a success, a stale If-Match, or a 503')
  t.ok(
    requests.filter((o) => o.status === 503).every((o) => o.code === 'service_unavailable'),
    'every 503 is the envelope with service_unavailable',
  )
  t.ok(
    requests.some((o) => o.status === 503),
    'the cuts were seen by requests in flight',
  )
  for (const kind of ['POST', 'POST+Idempotency-Key', 'PATCH+If-Match', 'list', 'GET']) {
    t.ok(
      requests.some((o) => o.kind === kind && o.status !== 503),
      `${kind} answered during the run`,
    )
  }
  const cliRuns = outcomes.filter((o) => o.kind === 'CLI')
  t.ok(cliRuns.length > 0, `${cliRuns.length} CLI runs`)
  for (const run of cliRuns.filter((o) => o.status !== 0)) {
    t.match(run.code, /^error: [^\n]+$/, 'a failed CLI run says why in one line, without a stack trace')
  }

  // Afterwards: everything works on fresh connections, and nothing acknowledged was lost.
  const after = await create('after', { 'idempotency-key': 'after-the-cuts' })
  t.equal(after?.status, 201, 'a POST with Idempotency-Key after the cuts')
  t.equal(
    (await call('after', patchUrl, { method: 'PATCH', body: '{"stage":"lead"}', headers: { 'if-match': '*' } }))
      ?.status,
    200,
  )
  t.equal((await call('after', `${base}?limit=1`))?.status, 200)
  const stored = await admin.query<{ n: string }>('SELECT count(*) AS n FROM contacts WHERE id = ANY($1::uuid[])', [
    acknowledged,
  ])
  t.equal(Number(stored.rows[0]?.n), acknowledged.length, `all ${acknowledged.length} acknowledged creates are stored`)
  await waitFor(server, /auth-change notifications: listening again/, 10_000)
  const lost = server.output().match(/auth-change notifications: connection lost/g) ?? []
  t.ok(lost.length >= 1 && lost.length <= CUTS, `the listener's loss logged once per cut (${lost.length})`)
  t.notMatch(server.output(), /closing after an unexpected error/, 'no unexpected error reached the process')
})
