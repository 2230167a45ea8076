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
  // Every event is in the feed once the transactions that began writing before it have ended (the deliverers'
  // bookkeeping among them): moments after the last commit.
  const feedBy = Date.now() + 10_000
  let events: unknown[] = []
  while (events.length < CONTACTS && Date.now() < feedBy) {
    events = (await request(app, key, { method: 'GET', url: '/api/v1/events?limit=200' })).json().data
  }
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
