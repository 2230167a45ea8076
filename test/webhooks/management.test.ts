// Webhooks managed through the API: admin keys with webhooks:manage only, and contacts:read as well for what sends
// or shows contacts' events; https URLs of public addresses only, one refusal for every host that is not allowed,
// checked with a stubbed resolver (nothing here resolves a real name or connects anywhere); the secret shown once
// and stored sealed; tenants apart.
import t from 'tap'
import type { Scope } from '../../src/auth/api-key.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'

const HOOKS = '/api/v1/webhooks'

/** A resolver that knows a few names, as DNS would answer them; anything else does not resolve. */
const NAMES: Record<string, string[]> = {
  'crm.example.it': ['93.184.216.34'],
  'internal.example.it': ['10.0.0.7'],
  'mixed.example.it': ['93.184.216.34', '192.168.1.9'],
  'v6.example.it': ['2606:2800:220:1:248:1893:25c8:1946'],
  'metadata.example.it': ['169.254.169.254'],
  'internal-v6.example.it': ['fd00:10::5'],
  'compatible.example.it': ['::7f00:1'],
}
const resolve = async (host: string) => {
  const found = NAMES[host]
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return found
}

t.test('admin keys with webhooks:manage register, list, read and delete; the secret is shown once', async (t) => {
  const { app } = await build(t, {}, undefined, { features: { webhooks: { resolve } } })
  const { tenantId } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['contacts:read', 'webhooks:manage'])
  const created = await request(app, admin, {
    method: 'POST',
    url: HOOKS,
    payload: { url: 'https://crm.example.it/hooks', events: ['contact.created'], description: 'CRM' },
  })
  t.equal(created.statusCode, 201, created.body)
  const hook = created.json()
  t.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.same(hook.events, ['contact.created'])
  t.equal(created.headers.location, `${HOOKS}/${hook.id}`)
  const { secret, ...shown } = hook

  const listed = await request(app, admin, { method: 'GET', url: HOOKS })
  t.same(listed.json(), { data: [shown] }, 'listed without its secret')
  const read = await request(app, admin, { method: 'GET', url: `${HOOKS}/${hook.id}` })
  t.same(read.json(), shown, 'read without its secret')
  const [row] = await app.db.query<{ secret: Buffer }>('s', 'SELECT secret FROM webhooks WHERE id = $1', [hook.id])
  t.notOk(row?.secret.toString('latin1').includes(secret.slice(6, 20)), 'the database holds it sealed, not in clear')

  const defaults = await request(app, admin, { method: 'POST', url: HOOKS, payload: { url: 'https://v6.example.it/' } })
  t.same(
    defaults.json().events,
    ['contact.created', 'contact.updated', 'contact.erased'],
    'every event type unless said',
  )
  t.equal(defaults.json().description, null)

  t.equal((await request(app, admin, { method: 'DELETE', url: `${HOOKS}/${hook.id}` })).statusCode, 204)
  t.equal((await request(app, admin, { method: 'GET', url: `${HOOKS}/${hook.id}` })).statusCode, 404)
  t.equal((await request(app, admin, { method: 'DELETE', url: `${HOOKS}/${hook.id}` })).statusCode, 404)
  const log = await request(app, admin, { method: 'GET', url: `${HOOKS}/${defaults.json().id}/deliveries` })
  t.same(log.json(), { data: [] })
})

t.test('only the admin role, and only with the scope', async (t) => {
  const { app } = await build(t, {}, undefined, { features: { webhooks: { resolve } } })
  const { tenantId, key: editorWithout } = await createTenantWithKey(app)
  const editor = await addKey(app, tenantId, 'editor', ['contacts:read', 'webhooks:manage'])
  const adminWithout = await addKey(app, tenantId, 'admin', ['contacts:read', 'contacts:write'])
  const body = { url: 'https://crm.example.it/hooks' }
  const asEditor = await request(app, editor, { method: 'POST', url: HOOKS, payload: body })
  t.equal(asEditor.statusCode, 403)
  t.equal(asEditor.json().error.code, 'insufficient_role')
  const withoutScope = await request(app, adminWithout, { method: 'GET', url: HOOKS })
  t.equal(withoutScope.json().error.code, 'insufficient_scope')
  t.equal(
    (await request(app, adminWithout, { method: 'POST', url: HOOKS, payload: body })).json().error.message,
    'Permessi insufficienti: servono gli scope "webhooks:manage" e "contacts:read"; la chiave ha "contacts:read", "contacts:write".',
  )
  t.equal((await request(app, editorWithout, { method: 'GET', url: HOOKS })).json().error.code, 'insufficient_scope')
  t.equal((await app.inject({ method: 'GET', url: HOOKS })).statusCode, 401)
})

t.test('webhooks:manage alone cannot register a webhook nor read the deliveries: contacts:read too', async (t) => {
  // Issue #29: an admin key whose only scope was webhooks:manage got 403 on /contacts and /events, yet could
  // register a webhook and receive every contact's data, signed.
  const { app } = await build(t, {}, undefined, { features: { webhooks: { resolve } } })
  const { tenantId } = await createTenantWithKey(app)
  const manageOnly = await addKey(app, tenantId, 'admin', ['webhooks:manage'])
  const both = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const body = { url: 'https://crm.example.it/hooks' }
  const refused = await request(app, manageOnly, { method: 'POST', url: HOOKS, payload: body })
  t.equal(refused.statusCode, 403)
  t.same(refused.json(), {
    error: {
      code: 'insufficient_scope',
      message:
        'Permessi insufficienti: servono gli scope "webhooks:manage" e "contacts:read"; la chiave ha "webhooks:manage".',
    },
  })
  t.same((await request(app, manageOnly, { method: 'GET', url: HOOKS })).json().data, [], 'nothing was registered')
  for (const url of ['/api/v1/contacts', '/api/v1/events']) {
    t.equal((await request(app, manageOnly, { method: 'GET', url })).statusCode, 403, `${url}, as before`)
  }

  const hook = (await request(app, both, { method: 'POST', url: HOOKS, payload: body })).json()
  t.type(hook.id, 'string', 'with both scopes it registers')
  const deliveries = await request(app, manageOnly, { method: 'GET', url: `${HOOKS}/${hook.id}/deliveries` })
  t.equal(deliveries.statusCode, 403, "the deliveries log (events' ids and times) needs contacts:read too")
  t.equal(deliveries.json().error.code, 'insufficient_scope')
  t.equal((await request(app, both, { method: 'GET', url: `${HOOKS}/${hook.id}/deliveries` })).statusCode, 200)
  // What shows or removes the configuration only: webhooks:manage is enough.
  t.same((await request(app, manageOnly, { method: 'GET', url: HOOKS })).json().data.length, 1)
  t.equal((await request(app, manageOnly, { method: 'GET', url: `${HOOKS}/${hook.id}` })).statusCode, 200)
  t.equal((await request(app, manageOnly, { method: 'DELETE', url: `${HOOKS}/${hook.id}` })).statusCode, 204)
})

t.test('URLs: https to public addresses only, checked against what the name resolves to', async (t) => {
  const { app } = await build(t, {}, undefined, { features: { webhooks: { resolve } } })
  const { tenantId } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  // Every host that is not allowed gets the same words (issue #29: the refusal named the address a name resolved
  // to, and "does not resolve" differed from "private", so a tenant's admin could map the operator's DNS).
  const hostRefused = [
    'https://127.0.0.1/hooks',
    'https://10.0.0.1/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hooks',
    'https://[::ffff:10.0.0.1]/hooks',
    'https://[fd00:10::5]/hooks',
    'https://0.0.0.0/',
    'https://internal.example.it/hooks',
    'https://internal-v6.example.it/hooks',
    'https://mixed.example.it/hooks',
    'https://metadata.example.it/',
    'https://compatible.example.it/',
    'https://nowhere.example.it/',
    // IPv4-compatible IPv6 hiding loopback, private and metadata addresses, and the rest of ::/8.
    'https://[::127.0.0.1]/',
    'https://[::a00:1]/',
    'https://[::a9fe:a9fe]/',
    'https://[::1:0:0:1]/',
  ]
  const formatRefused = [
    'http://crm.example.it/hooks',
    'https://user:password@crm.example.it/hooks',
    'ftp://crm.example.it/',
    'not a url',
    // What an operator's terminal would act on, and spaces around the URL.
    'https://crm.example.it/\u001b[2J\u001b[31mX\u001b[0m',
    'https://crm.example.it/a\r\nFORGED',
    ' https://crm.example.it/hooks',
    'https://crm.example.it/hooks\t',
  ]
  const oneRefusal =
    'Il campo "url" non è valido: l’host deve essere un indirizzo pubblico, o un nome che si risolve solo in ' +
    'indirizzi pubblici.'
  for (const url of hostRefused) {
    const res = await request(app, admin, { method: 'POST', url: HOOKS, payload: { url } })
    t.equal(res.statusCode, 400, url)
    t.same(res.json(), { error: { code: 'invalid_body', message: oneRefusal } }, `${url}: the one refusal`)
  }
  for (const url of formatRefused) {
    const res = await request(app, admin, { method: 'POST', url: HOOKS, payload: { url } })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().error.code, 'invalid_body')
    t.match(res.json().error.message, /^Il campo "url" non è valido/)
    t.not(res.json().error.message, oneRefusal, `${url}: a format problem says which`)
  }
  t.same((await request(app, admin, { method: 'GET', url: HOOKS })).json().data, [], 'nothing was registered')
  const bad = await request(app, admin, {
    method: 'POST',
    url: HOOKS,
    payload: { url: 'https://crm.example.it', events: [] },
  })
  t.equal(bad.json().error.code, 'invalid_body', 'at least one event type')
  const unknown = await request(app, admin, {
    method: 'POST',
    url: HOOKS,
    payload: { url: 'https://crm.example.it', events: ['contact.deleted'] },
  })
  t.equal(unknown.json().error.code, 'invalid_body')
})

t.test('tenants never see each other’s webhooks; at most 20 each', async (t) => {
  const { app } = await build(t, { DATABASE_POOL_SIZE: '10', RATE_LIMIT_MAX: '1000' }, undefined, {
    features: { webhooks: { resolve } },
  })
  const scopes: Scope[] = ['webhooks:manage', 'contacts:read']
  const a = await createTenantWithKey(app, { role: 'admin', scopes })
  const b = await createTenantWithKey(app, { name: 'Altra', role: 'admin', scopes })
  const mine = (
    await request(app, a.key, { method: 'POST', url: HOOKS, payload: { url: 'https://crm.example.it/' } })
  ).json().id as string
  t.same((await request(app, b.key, { method: 'GET', url: HOOKS })).json().data, [])
  for (const [method, url] of [
    ['GET', `${HOOKS}/${mine}`],
    ['DELETE', `${HOOKS}/${mine}`],
    ['GET', `${HOOKS}/${mine}/deliveries`],
  ] as const) {
    t.equal((await request(app, b.key, { method, url })).statusCode, 404, `${method} ${url} of another tenant`)
  }
  for (let i = 1; i < 15; i++) {
    await request(app, a.key, { method: 'POST', url: HOOKS, payload: { url: `https://crm.example.it/${i}` } })
  }
  // Sixty more at once, for the last five places: they must not all see room for themselves.
  const racing = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      request(app, a.key, { method: 'POST', url: HOOKS, payload: { url: `https://crm.example.it/r${i}` } }),
    ),
  )
  t.equal(racing.filter((r) => r.statusCode === 201).length, 5, 'five created')
  const refused = racing.filter((r) => r.statusCode !== 201)
  t.same(
    refused.map((r) => [r.statusCode, r.json().error.code]),
    Array.from({ length: 55 }, () => [409, 'limit_reached']),
  )
  t.equal((await request(app, a.key, { method: 'GET', url: HOOKS })).json().data.length, 20, 'never more than 20')
  t.equal(
    (await request(app, b.key, { method: 'POST', url: HOOKS, payload: { url: 'https://crm.example.it/' } })).statusCode,
    201,
  )
})

t.test('without a key for the secrets, webhooks cannot be created (and the start said so)', async (t) => {
  const lines: string[] = []
  const { app } = await build(
    t,
    { WEBHOOKS_SECRET_KEY: '', LOG_LEVEL: 'warn' },
    { write: (line) => lines.push(line) },
    { features: { webhooks: { resolve } } },
  )
  const { key } = await createTenantWithKey(app, { role: 'admin', scopes: ['webhooks:manage', 'contacts:read'] })
  const res = await request(app, key, { method: 'POST', url: HOOKS, payload: { url: 'https://crm.example.it/' } })
  t.equal(res.statusCode, 503)
  t.equal(res.json().error.code, 'service_unavailable')
  t.ok(lines.some((line) => line.includes('WEBHOOKS_SECRET_KEY is not set')))
})

t.test('logged attempts past the retention are purged, tenant by tenant; recent ones stay', async (t) => {
  const { app } = await build(t, {}, undefined, { features: { webhooks: { resolve } } })
  const hooks: { tenantId: string; admin: string; id: string }[] = []
  for (const name of ['Uno', 'Due']) {
    const { tenantId } = await createTenantWithKey(app, { name })
    const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
    const created = await request(app, admin, {
      method: 'POST',
      url: HOOKS,
      payload: { url: 'https://crm.example.it/h' },
    })
    hooks.push({ tenantId, admin, id: created.json().id })
  }
  const rows: [number, string, number][] = [
    [1, 'delivered', 40],
    [2, 'given_up', 31],
    [3, 'delivered', 2],
  ]
  for (const { tenantId, id } of hooks) {
    for (const [attempt, outcome, days] of rows) {
      await app.db.query(
        'purge_fixture',
        `INSERT INTO delivery_attempts (tenant_id, webhook_id, event_id, attempt, status, duration_ms, outcome, at)
          VALUES ($1, $2, gen_random_uuid(), $3, 200, 5, $4::text::delivery_outcome, now() - make_interval(days => $5))`,
        [tenantId, id, attempt, outcome, days],
      )
    }
  }
  t.equal(await app.webhooks.purge(30), 4, 'the two attempts past 30 days, of each tenant')
  for (const { admin, id } of hooks) {
    const left = await request(app, admin, { method: 'GET', url: `${HOOKS}/${id}/deliveries` })
    t.same(
      left.json().data.map((line: { attempt: number }) => line.attempt),
      [3],
      'the recent one stays',
    )
  }
})
