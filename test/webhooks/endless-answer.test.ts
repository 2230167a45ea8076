// Issue #29: a receiver that answers with an endless body. Tenant A's six webhooks point at a receiver (its own
// process, on loopback) that answers 200 and then streams without end; tenant B's webhook at one that answers 204
// at once. Every streaming answer must be cut after a few KB (its socket closed at once, not at the attempt's
// timeout), A's attempts count by their status (delivered), and B's deliveries keep arriving within a generous
// bound. Before the fix the transport read each answer until the timeout, 8 streams per webhook: here the streams
// stayed open toward the 30 s timeout, rubrica's process spending more than a core reading them, and this test
// failed on that; B's deliveries (plain HTTP on loopback) stayed under a second, so their bound guards rather
// than detects.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import t, { type Test } from 'tap'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import { until } from '../wait.ts'

const LIST = '/api/v1/contacts'
const HOOKS = '/api/v1/webhooks'
/** Long, so that a stream read until the timeout outlasts the test's bounds by far. */
const TIMEOUT_MS = 30_000
const STREAMING_WEBHOOKS = 6
const A_CONTACTS = 16
const B_CONTACTS = 8
/** Generous bounds, that the bug exceeded by far (it kept each stream open for TIMEOUT_MS). */
const B_DELIVERY_BOUND_MS = 5_000
const STREAM_CLOSED_BOUND_MS = 5_000

async function listen(t: Test, server: ReturnType<typeof createServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

/**
 * A receiver in a process of its own, as a real one is (in this process it would share the event loop it is to
 * load): each request is answered 200, then 64 KiB chunks are written as fast as the socket takes them, until the
 * socket closes. GET /streams tells, for each answer, how long it stayed open and how much was written.
 */
const STREAMING_RECEIVER = `
const { createServer } = require('node:http')
const chunk = Buffer.alloc(64 * 1024, 'x')
const streams = []
const server = createServer((request, response) => {
  request.resume()
  if (request.method === 'GET') {
    const now = performance.now()
    return response.end(JSON.stringify(streams.map((s) => ({ open: (s.closed ?? now) - s.opened, closed: s.closed !== null, bytes: s.bytes }))))
  }
  const stream = { opened: performance.now(), closed: null, bytes: 0 }
  streams.push(stream)
  response.on('close', () => { stream.closed = performance.now() })
  response.writeHead(200, { 'content-type': 'application/octet-stream' })
  const pump = () => {
    while (!response.destroyed) {
      stream.bytes += chunk.length
      if (!response.write(chunk)) return void response.once('drain', pump)
    }
  }
  pump()
})
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
`

interface Stream {
  open: number
  closed: boolean
  bytes: number
}

async function streamingReceiver(t: Test) {
  const child = spawn(process.execPath, ['-e', STREAMING_RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => {
    child.kill()
  })
  const [line] = (await once(child.stdout, 'data')) as [Buffer]
  const url = `http://127.0.0.1:${Number(line.toString().trim())}`
  const streams = async (): Promise<Stream[]> => (await fetch(`${url}/streams`)).json() as Promise<Stream[]>
  return { url, streams }
}

/** Answers 204 at once and notes when each event id arrived. */
async function promptReceiver(t: Test) {
  const arrived = new Map<string, number>()
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      arrived.set(String(request.headers['webhook-id']), performance.now())
      response.writeHead(204).end()
    })
  })
  return { url: await listen(t, server), arrived }
}

t.test("endless answers to tenant A's webhooks do not hold back tenant B's deliveries", async (t) => {
  const streaming = await streamingReceiver(t)
  const prompt = await promptReceiver(t)
  const { app } = await build(t, {
    WEBHOOKS_ENABLED: 'true',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOKS_RETRY_SCHEDULE: '0,0,0',
    RATE_LIMIT_MAX: '100000',
  })
  const a = await createTenantWithKey(app, { scopes: ['contacts:read', 'contacts:write'] })
  const b = await createTenantWithKey(app, { name: 'Altra', scopes: ['contacts:read', 'contacts:write'] })
  const adminA = await addKey(app, a.tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const adminB = await addKey(app, b.tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hooksA: string[] = []
  for (let i = 0; i < STREAMING_WEBHOOKS; i++) {
    const created = await request(app, adminA, {
      method: 'POST',
      url: HOOKS,
      payload: { url: `${streaming.url}/${i}` },
    })
    t.equal(created.statusCode, 201, created.body)
    hooksA.push(created.json().id)
  }
  const hookB = await request(app, adminB, { method: 'POST', url: HOOKS, payload: { url: `${prompt.url}/b` } })
  t.equal(hookB.statusCode, 201, hookB.body)

  const cpuFrom = process.cpuUsage()
  // In one transaction, so that each webhook's deliveries are taken together: 8 streams per webhook at once.
  const batch = await request(app, a.key, {
    method: 'POST',
    url: `${LIST}/batch`,
    payload: { contacts: Array.from({ length: A_CONTACTS }, (_, i) => ({ email: `a${i}@example.it` })) },
  })
  t.equal(batch.json().created, A_CONTACTS, batch.body.slice(0, 300))
  // B writes once A's streams are running.
  await until(async () => (await streaming.streams()).length >= STREAMING_WEBHOOKS * 8, 'the streams to start', 20_000)

  const latencies: number[] = []
  let position = (await request(app, b.key, { method: 'GET', url: '/api/v1/events?after=now' })).json().next
  for (let i = 0; i < B_CONTACTS; i++) {
    const created = await request(app, b.key, { method: 'POST', url: LIST, payload: { email: `b${i}@example.it` } })
    t.equal(created.statusCode, 201)
    const committed = performance.now()
    const page = (await request(app, b.key, { method: 'GET', url: `/api/v1/events?after=${position}` })).json()
    position = page.next
    const id = String(page.data[0]?.id)
    await until(() => prompt.arrived.has(id), `B's delivery ${i}`, TIMEOUT_MS)
    latencies.push(Math.max(0, (prompt.arrived.get(id) ?? 0) - committed))
  }
  t.comment(`B's deliveries after their commit, ms: ${latencies.map(Math.round).join(', ')}`)
  t.ok(
    latencies.every((ms) => ms < B_DELIVERY_BOUND_MS),
    `each of B's deliveries arrived within ${B_DELIVERY_BOUND_MS} ms (slowest ${Math.round(Math.max(...latencies))})`,
  )

  // Every streaming answer was cut after a few KB: its socket closed at once, not at the attempt's timeout.
  const settled = async () => (await streaming.streams()).every((s) => s.closed || s.open >= STREAM_CLOSED_BOUND_MS)
  await until(settled, 'every stream closed, or open past the bound', TIMEOUT_MS)
  const streams = await streaming.streams()
  const cpu = process.cpuUsage(cpuFrom)
  t.comment(`CPU of this process (rubrica's) meanwhile: ${Math.round((cpu.user + cpu.system) / 1000)} ms`)
  t.comment(
    `${streams.length} streams, open ms: max ${Math.round(Math.max(...streams.map((s) => s.open)))}; ` +
      `written before the close (most in the sockets' buffers): max ${Math.max(...streams.map((s) => s.bytes))} bytes`,
  )
  t.ok(
    streams.every((s) => s.closed && s.open < STREAM_CLOSED_BOUND_MS),
    `every stream closed within ${STREAM_CLOSED_BOUND_MS} ms`,
  )

  // A 2xx whose body is cut is a delivery: nothing of A's is retried.
  await until(
    async () => {
      const [row] = await app.db.query<{ delivered: number; retrying: number }>(
        'a_delivered',
        `SELECT (SELECT count(*)::int FROM delivery_attempts WHERE tenant_id = $1 AND outcome = 'delivered') AS delivered,
          (SELECT count(*)::int FROM delivery_retries WHERE tenant_id = $1) AS retrying`,
        [a.tenantId],
      )
      return row?.delivered === A_CONTACTS * hooksA.length && row.retrying === 0
    },
    "A's deliveries recorded",
    20_000,
  )
  const log = (await request(app, adminA, { method: 'GET', url: `${HOOKS}/${hooksA[0]}/deliveries` })).json().data
  t.equal(log.length, A_CONTACTS, 'one attempt per event')
  t.ok(
    log.every(
      (line: { status: number; error: string | null; outcome: string }) =>
        line.status === 200 && line.error === null && line.outcome === 'delivered',
    ),
    'each counted by its status: delivered',
  )
})
