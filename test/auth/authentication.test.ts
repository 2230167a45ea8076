import { install } from '@sinonjs/fake-timers'
import t from 'tap'
import { hashApiKey } from '../../src/auth/api-key.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

t.test('authentication and authorization, in the promised order', async (t) => {
  const { app } = await build(t)
  const tenant = await createTenantWithKey(app)

  const cases: [string, Record<string, string>, number, string][] = [
    ['no header', {}, 401, 'missing_authorization'],
    ['empty header', { authorization: '' }, 401, 'missing_authorization'],
    ['wrong scheme', { authorization: `Basic ${tenant.key}` }, 401, 'invalid_key_format'],
    ['no scheme', { authorization: tenant.key }, 401, 'invalid_key_format'],
    ['short key', { authorization: 'Bearer svc_abc' }, 401, 'invalid_key_format'],
    ['wrong prefix', { authorization: `Bearer sk_${'a'.repeat(48)}` }, 401, 'invalid_key_format'],
    ['non-hex key', { authorization: `Bearer svc_${'g'.repeat(48)}` }, 401, 'invalid_key_format'],
    ['unknown key', { authorization: `Bearer svc_${'a'.repeat(48)}` }, 401, 'invalid_key'],
  ]
  for (const [name, headers, status, code] of cases) {
    const res = await app.inject({ method: 'GET', url: LIST, headers })
    t.equal(res.statusCode, status, name)
    t.equal(res.json().error.code, code, name)
    t.match(res.json().error.message, /\S/, `${name}: message present`)
  }

  for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
    const res = await app.inject({ method: 'GET', url: LIST, headers: { authorization: `${scheme} ${tenant.key}` } })
    t.equal(res.statusCode, 200, `scheme ${scheme} accepted`)
  }
})

t.test('revoked keys, closed and suspended tenants', async (t) => {
  const { app } = await build(t, { AUTH_CACHE_TTL_MS: '0' })
  const prisma = app.db.prisma

  const revoked = await createTenantWithKey(app)
  await prisma.apiKey.updateMany({ where: { tenantId: revoked.tenantId }, data: { revokedAt: new Date() } })
  const revokedRes = await request(app, revoked.key, { method: 'GET', url: LIST })
  t.equal(revokedRes.statusCode, 401)
  t.equal(revokedRes.json().error.code, 'invalid_key')

  const closed = await createTenantWithKey(app, { status: 'closed' })
  const closedRes = await request(app, closed.key, { method: 'GET', url: LIST })
  t.equal(closedRes.statusCode, 401)
  t.equal(closedRes.json().error.code, 'invalid_or_revoked')
  t.equal(closedRes.json().error.message, revokedRes.json().error.message, 'closed and revoked read the same')

  const suspended = await createTenantWithKey(app, { status: 'suspended' })
  const suspendedRes = await request(app, suspended.key, { method: 'POST', url: LIST, payload: { nope: 1 } })
  t.equal(suspendedRes.statusCode, 403, 'suspended is refused before the body is looked at')
  t.equal(suspendedRes.json().error.code, 'tenant_suspended')
})

t.test('scopes and roles', async (t) => {
  const { app } = await build(t)
  const tenant = await createTenantWithKey(app, { scopes: ['contacts:read'], role: 'admin' })

  const write = await request(app, tenant.key, { method: 'POST', url: LIST, payload: { email: 'a@b.it' } })
  t.equal(write.statusCode, 403)
  t.equal(write.json().error.code, 'insufficient_scope')
  t.match(write.json().error.message, /"contacts:write"/, 'names the required scope')
  t.match(write.json().error.message, /"contacts:read"/, 'names the held scope')

  // The CLI refuses to issue a key without scopes; one could still exist (e.g. edited by hand).
  const noScopes = `svc_${'c'.repeat(48)}`
  await app.db.prisma.apiKey.create({
    data: { tenantId: tenant.tenantId, role: 'admin', scopes: [], keyHash: hashApiKey(noScopes), hint: 'cccc' },
  })
  const read = await request(app, noScopes, { method: 'GET', url: LIST })
  t.equal(read.json().error.code, 'insufficient_scope')
  t.match(read.json().error.message, /nessuno scope/)

  const viewer = await addKey(app, tenant.tenantId, 'viewer', ['contacts:read', 'contacts:write'])
  t.equal((await request(app, viewer, { method: 'GET', url: LIST })).statusCode, 200, 'viewer reads')
  const viewerWrite = await request(app, viewer, { method: 'POST', url: LIST, payload: { email: 'a@b.it' } })
  t.equal(viewerWrite.statusCode, 403)
  t.equal(viewerWrite.json().error.code, 'insufficient_role')
  t.equal(await app.db.prisma.contact.count(), 0, 'nothing created')

  const viewerPatch = await request(app, viewer, {
    method: 'PATCH',
    url: `${LIST}/00000000-0000-4000-8000-000000000000`,
    payload: { stage: 'lead' },
  })
  t.equal(viewerPatch.json().error.code, 'insufficient_role')

  for (const role of ['admin', 'editor'] as const) {
    const key = await addKey(app, tenant.tenantId, role, ['contacts:read', 'contacts:write'])
    const res = await request(app, key, { method: 'POST', url: LIST, payload: { email: `${role}@b.it` } })
    t.equal(res.statusCode, 201, `${role} writes`)
  }
})

t.test('a cached key is refused within the cache lifetime after revocation', async (t) => {
  const { app } = await build(t, { AUTH_CACHE_TTL_MS: '300' })
  const tenant = await createTenantWithKey(app)
  t.equal((await request(app, tenant.key, { method: 'GET', url: LIST })).statusCode, 200)
  await app.db.prisma.apiKey.updateMany({ where: { tenantId: tenant.tenantId }, data: { revokedAt: new Date() } })
  await app.db.prisma.tenant.update({ where: { id: tenant.tenantId }, data: { status: 'suspended' } })
  await new Promise((resolve) => setTimeout(resolve, 350))
  const res = await request(app, tenant.key, { method: 'GET', url: LIST })
  t.equal(res.statusCode, 401, 'refused once the cache entry expired')
})

t.test('the key is recorded as used, and never in clear', async (t) => {
  const { app } = await build(t)
  const tenant = await createTenantWithKey(app)
  await request(app, tenant.key, { method: 'GET', url: LIST })
  // lastUsedAt is written off the request path: give it a moment.
  let key = await app.db.prisma.apiKey.findFirstOrThrow({ where: { tenantId: tenant.tenantId } })
  for (let i = 0; i < 20 && key.lastUsedAt === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25))
    key = await app.db.prisma.apiKey.findFirstOrThrow({ where: { tenantId: tenant.tenantId } })
  }
  t.ok(key.lastUsedAt, 'lastUsedAt set')
  t.not(key.keyHash, tenant.key)
  t.equal(key.hint, tenant.key.slice(-4))
})

t.test('rate limit: per tenant, shared by its keys, with headers', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW: '60000' })
  const tenant = await createTenantWithKey(app)
  const second = await addKey(app, tenant.tenantId, 'viewer', ['contacts:read'])
  const other = await createTenantWithKey(app, { name: 'Other' })

  for (let i = 0; i < 5; i++) {
    const res = await request(app, i % 2 ? second : tenant.key, { method: 'GET', url: LIST })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-limit'], '5')
    t.equal(res.headers['x-ratelimit-remaining'], String(4 - i))
    t.ok(Number(res.headers['x-ratelimit-reset']) > 0 && Number(res.headers['x-ratelimit-reset']) <= 60)
    t.notOk(res.headers['retry-after'], 'no Retry-After before the limit')
  }
  const limited = await request(app, second, { method: 'GET', url: LIST })
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().error.code, 'rate_limit_exceeded')
  t.match(limited.json().error.message, /5 richieste ogni 60 secondi/)
  t.match(limited.json().error.message, new RegExp(`riprova tra ${limited.headers['retry-after']} second`))
  t.ok(Number(limited.headers['retry-after']) > 0)
  t.equal(limited.headers['x-ratelimit-remaining'], '0')

  const otherRes = await request(app, other.key, { method: 'GET', url: LIST })
  t.equal(otherRes.statusCode, 200, 'another tenant has its own budget')
})

t.test('once RATE_LIMIT_WINDOW has passed the budget is whole again (a fake clock: no waiting)', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '60000' })
  const tenant = await createTenantWithKey(app)
  // Only Date is faked: the window is counted with Date.now(), while the database and Fastify keep real timers.
  const clock = install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const list = () => request(app, tenant.key, { method: 'GET', url: LIST })

  for (let i = 1; i <= 3; i++) t.equal((await list()).statusCode, 200, `request ${i} of 3`)
  t.equal((await list()).statusCode, 429, 'the budget is spent')
  clock.tick(60_000 - 1)
  t.equal((await list()).statusCode, 429, 'still spent 1 ms before the window ends')
  clock.tick(1)
  const renewed = await list()
  t.equal(renewed.statusCode, 200, 'served again once the window has passed')
  t.equal(renewed.headers['x-ratelimit-limit'], '3')
  t.equal(renewed.headers['x-ratelimit-remaining'], '2', 'the whole budget but this request (max - 1)')
  t.equal(renewed.headers['x-ratelimit-reset'], '60', 'a whole window ahead')
})

t.test('refused requests are limited per client address', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '3' })
  const tenant = await createTenantWithKey(app)
  const known = await createTenantWithKey(app, { name: 'Known' })
  t.equal((await request(app, known.key, { method: 'GET', url: LIST })).statusCode, 200, 'a key resolved before')
  for (let i = 0; i < 3; i++) {
    const res = await request(app, `svc_${String(i).repeat(48)}`, { method: 'GET', url: LIST })
    t.equal(res.statusCode, 401)
  }
  const guess = await request(app, `svc_${'9'.repeat(48)}`, { method: 'GET', url: LIST })
  t.equal(guess.statusCode, 429, 'key guessing is throttled')
  const cached = await request(app, known.key, { method: 'GET', url: LIST })
  t.equal(cached.statusCode, 200, 'a key this instance knows uses its tenant budget, not the address one')
  const unknown = await request(app, tenant.key, { method: 'GET', url: LIST })
  t.equal(unknown.statusCode, 429, 'a key not yet looked up is not looked up for an exhausted address')
})
