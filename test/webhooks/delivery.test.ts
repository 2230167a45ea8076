// Deliveries to a receiver on loopback that verifies every signature with the standardwebhooks package: it fails,
// then hangs past the timeout, then recovers; every event arrives, with the same webhook-id on every attempt, and
// the deliveries log says what each attempt got. The connect-time address check is tested with a stubbed lookup
// and a connect hook that records instead of connecting: nothing here reaches any address but loopback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import https from 'node:https'
import { type LookupFunction, Socket } from 'node:net'
import { Webhook as Verifier } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { httpTransport } from '../../src/webhooks/transport.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import { until } from '../wait.ts'

const LIST = '/api/v1/contacts'
const HOOKS = '/api/v1/webhooks'

interface Received {
  id: string
  body: string
  headers: Record<string, string>
}

/** A receiver on a free loopback port; `answer` decides each request's fate from its order. */
async function receiver(t: Test, answer: (n: number, request: IncomingMessage, response: ServerResponse) => void) {
  const received: Received[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push({
        id: String(request.headers['webhook-id']),
        body,
        headers: request.headers as Record<string, string>,
      })
      answer(received.length, request, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  t.teardown(() => server.closeAllConnections())
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { url: `http://127.0.0.1:${port}/hook`, received }
}

const DELIVERING = {
  WEBHOOKS_ENABLED: 'true',
  WEBHOOKS_ALLOW_INSECURE: 'true',
  WEBHOOKS_TIMEOUT_MS: '400',
  WEBHOOKS_RETRY_SCHEDULE: '0,0,0,0,0',
  RATE_LIMIT_MAX: '100000',
}

t.test('fails, hangs, recovers: every event arrives signed, the same id on every attempt, all logged', async (t) => {
  // Requests 1-3 get 500, 4-5 no answer at all (past the timeout), every later one 204.
  const hook = await receiver(t, (n, _request, response) => {
    if (n <= 3) response.writeHead(500).end('no')
    else if (n > 5) response.writeHead(204).end()
  })
  const { app } = await build(t, DELIVERING)
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const created = await request(app, admin, { method: 'POST', url: HOOKS, payload: { url: hook.url } })
  t.equal(created.statusCode, 201, created.body)
  const { id: webhookId, secret } = created.json()

  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    ids.push((await request(app, key, { method: 'POST', url: LIST, payload: { email: `w${i}@example.it` } })).json().id)
  }
  await request(app, key, { method: 'PATCH', url: `${LIST}/${ids[0]}`, payload: { stage: 'customer' } })
  const feed = (await request(app, key, { method: 'GET', url: '/api/v1/events' })).json().data as { id: string }[]
  t.equal(feed.length, 4)
  const delivered = () => new Set(hook.received.filter((_, i) => i >= 5).map((r) => r.id))
  await until(() => feed.every((event) => delivered().has(event.id)), 'every event delivered')

  const verifier = new Verifier(secret)
  for (const got of hook.received) {
    t.doesNotThrow(() => verifier.verify(got.body, got.headers), `the signature of ${got.id} verifies`)
    t.equal(got.headers['content-type'], 'application/json')
  }
  for (const event of feed) {
    const bodies = hook.received.filter((got) => got.id === event.id).map((got) => JSON.parse(got.body))
    t.ok(bodies.length >= 1)
    for (const body of bodies) t.same(body, event, 'the body is the event, as the feed shows it')
  }
  const retried = hook.received.slice(0, 5).map((got) => got.id)
  t.ok(
    retried.every((id) => hook.received.slice(5).some((got) => got.id === id)),
    'each failed attempt was retried with the same webhook-id',
  )

  const deliveries = async () =>
    (await request(app, admin, { method: 'GET', url: `${HOOKS}/${webhookId}/deliveries` })).json().data
  // The last answer may be received before its attempt is recorded.
  await until(async () => (await deliveries()).length >= hook.received.length, 'every attempt recorded')
  const log = await deliveries()
  t.equal(log.length, hook.received.length, 'one log line per attempt')
  t.ok(
    log.some((line: { status: number | null }) => line.status === 500),
    'the 500s',
  )
  t.ok(
    log.some(
      (line: { status: number | null; error: string }) =>
        line.status === null && /no answer within 400 ms/.test(line.error),
    ),
    'the timeouts',
  )
  t.ok(
    log.some(
      (line: { status: number | null; error: string | null; outcome: string }) =>
        line.status === 204 && line.error === null && line.outcome === 'delivered',
    ),
  )
  t.ok(
    log.every(
      (line: { error: string | null; outcome: string }) => line.outcome === (line.error ? 'retried' : 'delivered'),
    ),
    'every failed attempt here was retried',
  )
  const times = log.map((line: { at: string }) => line.at)
  t.same(times, [...times].sort().reverse(), 'newest first')
})

t.test('a failing endpoint is given up after the schedule; a deleted webhook gets nothing more', async (t) => {
  const down = await receiver(t, (_n, _request, response) => response.writeHead(503).end())
  const { app } = await build(t, { ...DELIVERING, WEBHOOKS_RETRY_SCHEDULE: '0' })
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hook = (await request(app, admin, { method: 'POST', url: HOOKS, payload: { url: down.url } })).json()
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'giveup@example.it' } })
  const logOf = async () =>
    (await request(app, admin, { method: 'GET', url: `${HOOKS}/${hook.id}/deliveries` })).json().data as {
      outcome: string
    }[]
  await until(async () => (await logOf()).some((line) => line.outcome === 'given_up'), 'the delivery given up')
  t.equal(down.received.length, 2, 'one attempt and one retry')
  t.match(
    await logOf(),
    [
      { attempt: 2, status: 503, error: 'HTTP 503', outcome: 'given_up' },
      { attempt: 1, status: 503, error: 'HTTP 503', outcome: 'retried' },
    ],
    'the log says which attempt was retried and which was the last',
  )

  const [retries] = await app.db.query<{ n: number }>(
    'retries',
    'SELECT count(*)::int AS n FROM delivery_retries WHERE tenant_id = $1',
    [tenantId],
  )
  t.equal(retries?.n, 0, 'nothing left to retry')
  t.equal((await request(app, admin, { method: 'DELETE', url: `${HOOKS}/${hook.id}` })).statusCode, 204)
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'after@example.it' } })
  await new Promise((resolve) => setTimeout(resolve, 800))
  t.equal(down.received.length, 2, 'nothing for a deleted webhook')
})

t.test("a tenant's webhook gets its own tenant's events only, and only the types it asked for", async (t) => {
  const hook = await receiver(t, (_n, _request, response) => response.writeHead(200).end())
  const { app } = await build(t, DELIVERING)
  const a = await createTenantWithKey(app)
  const b = await createTenantWithKey(app, { name: 'Altra' })
  const admin = await addKey(app, a.tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  await request(app, admin, { method: 'POST', url: HOOKS, payload: { url: hook.url, events: ['contact.updated'] } })
  const mine = (await request(app, a.key, { method: 'POST', url: LIST, payload: { email: 'a@example.it' } })).json()
  await request(app, b.key, { method: 'POST', url: LIST, payload: { email: 'b@example.it' } })
  await request(app, a.key, { method: 'PATCH', url: `${LIST}/${mine.id}`, payload: { stage: 'customer' } })
  await until(() => hook.received.length >= 1, 'a delivery')
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(hook.received.length, 1)
  const body = JSON.parse(hook.received[0]?.body ?? '{}')
  t.equal(body.type, 'contact.updated')
  t.equal(body.data.id, mine.id)
})

interface Connect {
  host: string
  refused: string | null
  address: string | null
}

/**
 * Replaces the TLS connections every agent would open, for the test: each is recorded with what the lookup the
 * agent gives it decided (request-filtering-agent's, around rubrica's, around the test's stub), and never made.
 */
function recordConnections(t: Test): Connect[] {
  const connects: Connect[] = []
  const original = https.Agent.prototype.createConnection
  https.Agent.prototype.createConnection = function record(options: { host?: string; lookup?: LookupFunction }) {
    const socket = new Socket()
    // Connecting, as far as the request can tell: it waits for 'connect', which never comes.
    Object.defineProperty(socket, 'connecting', { value: true })
    // As a real socket does, it looks the name up once the request listens to it.
    setImmediate(() =>
      options.lookup?.(options.host ?? '', {}, (error: Error | null, address?: unknown) => {
        connects.push({
          host: String(options.host),
          refused: error?.message ?? null,
          address: error ? null : String(address),
        })
        // What a socket whose lookup failed reports, then closes.
        socket.emit('error', error ?? new Error('the test never connects'))
        socket.destroy()
      }),
    )
    return socket
  } as typeof original
  t.teardown(() => {
    https.Agent.prototype.createConnection = original
  })
  return connects
}

/**
 * A webhook registered while its name resolved to a public address, delivered while the deliveries' lookup
 * answers `address` (DNS rebinding): what the attempt logged, what was looked up, and what would have connected.
 */
async function deliverRebound(t: Test, address: string, family: 4 | 6) {
  const resolve = async () => ['93.184.216.34']
  const lookups: string[] = []
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    lookups.push(hostname)
    if (options.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as unknown as LookupFunction
  const connects = recordConnections(t)
  const { app } = await build(
    t,
    { ...DELIVERING, WEBHOOKS_ALLOW_INSECURE: 'false', WEBHOOKS_RETRY_SCHEDULE: '60' },
    undefined,
    { features: { webhooks: { resolve, lookup } } },
  )
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hook = await request(app, admin, {
    method: 'POST',
    url: HOOKS,
    payload: { url: 'https://crm.example.it/hook' },
  })
  t.equal(hook.statusCode, 201, 'registered: the name resolved to a public address then')
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'rebind@example.it' } })
  const url = `${HOOKS}/${hook.json().id}/deliveries`
  await until(async () => (await request(app, admin, { method: 'GET', url })).json().data.length > 0, 'an attempt')
  const [attempt] = (await request(app, admin, { method: 'GET', url })).json().data
  return { attempt, lookups, connects }
}

t.test('at connect time, a name that now resolves to a private address is refused, never connected', async (t) => {
  const { attempt, lookups, connects } = await deliverRebound(t, '10.0.0.1', 4)
  t.same(
    [attempt.status, attempt.error],
    [null, 'host not found or not public'],
    `the attempt failed: ${JSON.stringify({ lookups, connects })}`,
  )
  t.ok(lookups.includes('crm.example.it'), 'the delivery looked the name up with the stub')
  t.ok(
    connects.length > 0 && connects.every((c) => c.refused !== null && c.address === null),
    'the lookup the connection used refused the address',
  )
  t.notOk(
    connects.some((c) => c.address === '10.0.0.1'),
    'no connection to the private address was even begun',
  )
})

t.test('at connect time, an IPv4-compatible IPv6 address (::/8) is refused, as at registration', async (t) => {
  // Issue #29: request-filtering-agent counts ::7f00:1 (127.0.0.1 written as IPv4-compatible IPv6) as unicast;
  // registration refused all of ::/8, the connection let it through.
  const { attempt, lookups, connects } = await deliverRebound(t, '::7f00:1', 6)
  t.same([attempt.status, attempt.error], [null, 'host not found or not public'])
  t.ok(lookups.includes('crm.example.it'), 'the delivery looked the name up with the stub')
  t.ok(connects.length > 0, `the agent began a connection: ${JSON.stringify(connects)}`)
  t.ok(
    connects.every((c) => c.refused !== null && c.address === null),
    'the lookup the connection used refused ::7f00:1',
  )
})

t.test('an address of ::/8 in the URL itself is refused before any connection', async (t) => {
  // Registration refuses it; a URL stored before that rule, or put in the table by hand, meets this check.
  const connects = recordConnections(t)
  const transport = httpTransport({ allowInsecure: false })
  t.teardown(() => transport.close())
  for (const host of ['[::7f00:1]', '[::a9fe:a9fe]', '[::ffff:127.0.0.1]', '127.0.0.1', '[::1]']) {
    t.same(
      await transport.send(`https://${host}/hook`, '{}', {}, 1_000),
      { status: null, error: 'host not found or not public' },
      host,
    )
  }
  t.same(connects, [], 'no connection was begun')
})
