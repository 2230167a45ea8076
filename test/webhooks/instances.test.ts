// Several instances deliver from one database: each attempt is run by one of them only, never twice at once, and
// every event reaches every webhook. The instances here are three deliverers on the test's database (on
// PostgreSQL each takes its deliveries on its own connections, so their claims really race); their "endpoints"
// are a recording function, so nothing leaves the process.
import t from 'tap'
import { Deliverer } from '../../src/webhooks/deliverer.ts'
import { SecretBox } from '../../src/webhooks/secrets.ts'
import type { Send } from '../../src/webhooks/transport.ts'
import { addKey, build, createTenantWithKey, request, TEST_WEBHOOKS_KEY } from '../helper.ts'

const INSTANCES = 3
const WEBHOOKS = 4
const CONTACTS = 60

t.test('three instances, four webhooks: every attempt run once, every event delivered', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', WEBHOOKS_ALLOW_INSECURE: 'true', DATABASE_POOL_SIZE: '8' })
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hooks: string[] = []
  for (let i = 0; i < WEBHOOKS; i++) {
    const url = `http://127.0.0.1:9/hook-${i}`
    hooks.push((await request(app, admin, { method: 'POST', url: '/api/v1/webhooks', payload: { url } })).json().id)
  }

  // Every request an instance sends: which instance, to which URL, which event, and whether another instance
  // had the same webhook-id in flight to the same URL at that moment.
  const sent: { instance: number; url: string; id: string }[] = []
  const inFlight = new Map<string, number>()
  let overlapping = 0
  const endpoint =
    (instance: number): Send =>
    async (url, body, headers) => {
      const attempt = `${url} ${headers['webhook-id']}`
      if (inFlight.has(attempt)) overlapping++
      inFlight.set(attempt, instance)
      sent.push({ instance, url, id: String(headers['webhook-id']) })
      t.equal(JSON.parse(body).id, headers['webhook-id'])
      // Each instance answers at its own pace; one event in seven fails on its first attempt and is retried.
      await new Promise((resolve) => setTimeout(resolve, 2 + instance * 3))
      inFlight.delete(attempt)
      const first = sent.filter((s) => s.url === url && s.id === headers['webhook-id']).length === 1
      return first && (headers['webhook-id']?.charCodeAt(0) ?? 0) % 7 === 0
        ? { status: 500, error: 'HTTP 500' }
        : { status: 204, error: null }
    }
  const deliverers = Array.from(
    { length: INSTANCES },
    (_, instance) =>
      new Deliverer({
        db: app.db,
        box: new SecretBox(Buffer.from(TEST_WEBHOOKS_KEY, 'base64')),
        send: endpoint(instance),
        log: app.log,
        timeoutMs: 5_000,
        retrySchedule: [0],
      }),
  )
  for (const deliverer of deliverers) deliverer.start()
  t.teardown(() => Promise.all(deliverers.map((deliverer) => deliverer.stop())))

  await Promise.all(
    Array.from({ length: 4 }, async (_, writer) => {
      for (let i = writer; i < CONTACTS; i += 4) {
        const created = await request(app, key, {
          method: 'POST',
          url: '/api/v1/contacts',
          payload: { email: `istanza${i}@example.it` },
        })
        t.equal(created.statusCode, 201)
      }
    }),
  )
  // Every committed event is in the next page read, whatever the deliverers' own transactions are doing.
  const events = (await request(app, key, { method: 'GET', url: '/api/v1/events?limit=200' })).json().data
  t.equal(events.length, CONTACTS)

  const deadline = Date.now() + 30_000
  // Settled: every event delivered to every webhook, and nothing left to retry.
  const settled = async () => {
    const [row] = await app.db.query<{ delivered: number; retrying: number }>(
      'settled',
      `SELECT (SELECT count(DISTINCT (webhook_id, event_id))::int FROM delivery_attempts
          WHERE tenant_id = $1 AND outcome = 'delivered') AS delivered,
        (SELECT count(*)::int FROM delivery_retries WHERE tenant_id = $1) AS retrying`,
      [tenantId],
    )
    return row?.delivered === CONTACTS * WEBHOOKS && row.retrying === 0
  }
  while (!(await settled())) {
    if (Date.now() > deadline) throw new Error('deliveries still pending after 30 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  t.equal(overlapping, 0, 'no attempt was ever in flight twice at once')
  const attempts = await app.db.query<{ webhookId: string; eventId: string; attempt: number; status: number }>(
    'attempts',
    'SELECT webhook_id AS "webhookId", event_id AS "eventId", attempt, status FROM delivery_attempts',
    [],
  )
  t.equal(attempts.length, sent.length, 'one recorded attempt per request sent: none ran twice')
  for (const [i, webhookId] of hooks.entries()) {
    const url = `http://127.0.0.1:9/hook-${i}`
    const delivered = new Set(
      attempts.filter((a) => a.webhookId === webhookId && a.status === 204).map((a) => a.eventId),
    )
    t.equal(delivered.size, CONTACTS, `webhook ${i}: every event delivered`)
    const perEvent = new Map<string, number>()
    for (const s of sent.filter((s) => s.url === url)) perEvent.set(s.id, (perEvent.get(s.id) ?? 0) + 1)
    t.ok(
      [...perEvent.values()].every((n) => n <= 2),
      `webhook ${i}: an event is sent once, or twice when its first attempt failed`,
    )
  }
  const [cursors] = await app.db.query<{ leased: number }>(
    'cursors',
    'SELECT count(*) FILTER (WHERE leased_until IS NOT NULL)::int AS leased FROM webhook_cursors WHERE tenant_id = $1',
    [tenantId],
  )
  t.same(cursors, { leased: 0 }, 'every webhook let go')
  t.comment(`requests per instance: ${[0, 1, 2].map((i) => sent.filter((s) => s.instance === i).length).join(', ')}`)
})

t.test(
  'an instance whose key does not open the secrets gives its deliveries back; the right one delivers',
  async (t) => {
    const { app } = await build(t, { WEBHOOKS_ALLOW_INSECURE: 'true' })
    const { tenantId, key } = await createTenantWithKey(app)
    const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
    const hook = { url: 'http://127.0.0.1:9/hook' }
    t.equal((await request(app, admin, { method: 'POST', url: '/api/v1/webhooks', payload: hook })).statusCode, 201)
    await request(app, key, { method: 'POST', url: '/api/v1/contacts', payload: { email: 'chiave@example.it' } })
    const sent: string[] = []
    const errors: string[] = []
    const instance = (secretKey: Buffer) =>
      new Deliverer({
        db: app.db,
        box: new SecretBox(secretKey),
        send: async (_url, _body, headers) => {
          sent.push(String(headers['webhook-id']))
          return { status: 204, error: null }
        },
        log: Object.assign(Object.create(app.log), { error: (_: unknown, message: string) => errors.push(message) }),
        timeoutMs: 1_000,
        retrySchedule: [1],
      })
    const state = async () =>
      (
        await app.db.query<{ delivered: number; attempts: number; leased: boolean }>(
          'key_state',
          `SELECT (SELECT count(*)::int FROM delivery_attempts WHERE outcome = 'delivered') AS delivered,
            (SELECT count(*)::int FROM delivery_attempts) AS attempts,
            (SELECT leased_until IS NOT NULL FROM webhook_cursors) AS leased`,
          [],
        )
      )[0]

    const wrong = instance(Buffer.alloc(32, 99))
    wrong.start()
    const deadline = Date.now() + 10_000
    while (errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    await wrong.stop()
    t.match(errors[0], /WEBHOOKS_SECRET_KEY does not open/, 'the wrong key is told in the log')
    t.same(sent, [], 'nothing sent unsigned or badly signed')
    t.same(await state(), { delivered: 0, attempts: 0, leased: false }, 'given back as if never taken')

    const right = instance(Buffer.from(TEST_WEBHOOKS_KEY, 'base64'))
    right.start()
    t.teardown(() => right.stop())
    while ((await state())?.delivered !== 1 && Date.now() < deadline + 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    t.same(await state(), { delivered: 1, attempts: 1, leased: false }, 'delivered at its first attempt')
    t.equal(sent.length, 1)
  },
)

// A round with more attempts than its lease has time for (64 new events and 64 retries due, each attempt taking
// most of WEBHOOKS_TIMEOUT_MS) stops starting groups of attempts before its lease runs out, and records what it
// sent: another instance never takes the webhook while the first still sends, and nothing is sent twice.
t.test('a round stops within its lease: two instances, slow attempts, nothing sent twice', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', WEBHOOKS_ALLOW_INSECURE: 'true' })
  const { tenantId, key } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const url = 'http://127.0.0.1:9/lenta'
  t.equal((await request(app, admin, { method: 'POST', url: '/api/v1/webhooks', payload: { url } })).statusCode, 201)
  const contacts = 130
  for (let i = 0; i < contacts; i++) {
    await request(app, key, { method: 'POST', url: '/api/v1/contacts', payload: { email: `lenta${i}@example.it` } })
  }
  const timeoutMs = 300
  const sent: string[] = []
  const inFlight = new Set<string>()
  let overlapping = 0
  const deliverers = Array.from(
    { length: 2 },
    () =>
      new Deliverer({
        db: app.db,
        box: new SecretBox(Buffer.from(TEST_WEBHOOKS_KEY, 'base64')),
        // Each attempt takes most of the timeout; an event's first attempt fails, so that retries fill rounds too.
        send: async (_url, _body, headers) => {
          const id = String(headers['webhook-id'])
          if (inFlight.has(id)) overlapping++
          inFlight.add(id)
          sent.push(id)
          await new Promise((resolve) => setTimeout(resolve, timeoutMs - 40))
          inFlight.delete(id)
          return sent.filter((other) => other === id).length === 1
            ? { status: 500, error: 'HTTP 500' }
            : { status: 204, error: null }
        },
        log: app.log,
        timeoutMs,
        retrySchedule: [0],
      }),
  )
  for (const deliverer of deliverers) deliverer.start()
  t.teardown(() => Promise.all(deliverers.map((deliverer) => deliverer.stop())))
  const deadline = Date.now() + 60_000
  const delivered = async () =>
    (
      await app.db.query<{ n: number }>(
        'lenta_delivered',
        "SELECT count(*)::int AS n FROM delivery_attempts WHERE tenant_id = $1 AND outcome = 'delivered'",
        [tenantId],
      )
    )[0]?.n ?? 0
  while ((await delivered()) < contacts) {
    if (Date.now() > deadline) throw new Error('deliveries still pending after 60 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(overlapping, 0, 'no attempt in flight twice at once')
  t.equal(sent.length, contacts * 2, 'each event sent twice: its failed first attempt and its retry, no more')
  const [recorded] = await app.db.query<{ n: number }>(
    'lenta_attempts',
    'SELECT count(*)::int AS n FROM delivery_attempts WHERE tenant_id = $1',
    [tenantId],
  )
  t.equal(recorded?.n, sent.length, 'every request sent is recorded')
})
