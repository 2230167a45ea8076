// Request ids, logs, metrics and the client address behind a proxy: what operators rely on.
import t from 'tap'
import { trustProxy } from '../../../src/config/config.ts'
import { build, createTenantWithKey, request } from '../../helper.ts'
import { freePort } from '../../services.ts'

const LIST = '/api/v1/contacts'

t.test('request ids, one log line per request, never the key', async (t) => {
  const lines: string[] = []
  const { app } = await build(t, { LOG_LEVEL: 'info' }, { write: (line: string) => lines.push(line) })
  const { key, tenantId } = await createTenantWithKey(app)

  const given = await request(app, key, {
    method: 'GET',
    url: `${LIST}?limit=1`,
    headers: { 'x-request-id': 'abc-123' },
  })
  t.equal(given.headers['x-request-id'], 'abc-123', 'a caller id is kept')
  const unsafe = await request(app, key, {
    method: 'GET',
    url: LIST,
    headers: { 'x-request-id': 'bad id\n{"level":60}' },
  })
  t.match(unsafe.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an unsafe id is replaced')
  const fresh = await app.inject({ method: 'GET', url: LIST })
  t.match(fresh.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a missing id is generated')

  const entries = lines.map((line) => JSON.parse(line))
  const requestLines = entries.filter((e) => e.msg === 'request')
  t.equal(requestLines.length, 3, 'one line per request')
  t.match(requestLines[0], {
    reqId: 'abc-123',
    method: 'GET',
    route: '/api/v1/contacts',
    status: 200,
    tenantId,
  })
  t.type(requestLines[0].durationMs, 'number')
  t.equal(requestLines[2].tenantId, null, 'unauthenticated requests have no tenant')
  t.equal(requestLines[2].status, 401)
  t.notMatch(lines.join('\n'), new RegExp(key.slice(4)), 'the key never reaches the log')
  t.notMatch(lines.join('\n'), /authorization/i, 'nor the Authorization header')
})

t.test('Prometheus metrics on their own port', async (t) => {
  const { app } = await build(t, {
    RATE_LIMIT_MAX: '2',
    METRICS_ENABLED: 'true',
    METRICS_PORT: String(await freePort()),
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { key } = await createTenantWithKey(app)
  for (let i = 0; i < 3; i++) await request(app, key, { method: 'GET', url: LIST })
  const address = app.metrics.address()
  t.ok(address, 'the metrics server listens')
  const res = await fetch(address as string)
  t.equal(res.status, 200)
  const text = await res.text()
  t.match(
    text,
    /rubrica_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/contacts",status="200"\} 2/,
  )
  t.match(
    text,
    /rubrica_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/contacts",status="429"\} 1/,
  )
  t.match(text, /rubrica_rate_limit_refusals_total\{by="tenant"\} 1/)
  t.match(text, /rubrica_process_cpu_seconds_total/)
  const api = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(api.statusCode, 404, 'metrics are not on the public port')
  t.equal((await fetch(`${address}x`)).status, 404)
})

t.test('with METRICS_ENABLED=false nothing listens for metrics and refusals still work', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1', METRICS_ENABLED: 'false' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { key } = await createTenantWithKey(app)
  t.equal(app.metrics.address(), null, 'no metrics server')
  t.equal((await request(app, key, { method: 'GET', url: LIST })).statusCode, 200)
  const refused = await request(app, key, { method: 'GET', url: LIST })
  t.equal(refused.statusCode, 429, 'the refusal is answered although nothing counts it')
  t.equal(refused.json().error.code, 'rate_limit_exceeded')
})

t.test('behind a trusted proxy, the per-address limit uses X-Forwarded-For', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' })
  const bad = `svc_${'1'.repeat(48)}`
  const statuses: number[] = []
  for (const client of ['203.0.113.1', '203.0.113.1', '203.0.113.1', '203.0.113.2']) {
    const res = await request(app, bad, { method: 'GET', url: LIST, headers: { 'x-forwarded-for': client } })
    statuses.push(res.statusCode)
  }
  t.same(statuses, [401, 401, 429, 401], 'each client address has its own budget')

  t.equal(trustProxy({ TRUST_PROXY: 'false' }), false)
  t.equal(trustProxy({ TRUST_PROXY: 'true' }), true)
  t.same(trustProxy({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }), ['10.0.0.0/8', '127.0.0.1'])
  const hops = trustProxy({ TRUST_PROXY: '2' })
  t.ok(typeof hops === 'function' && hops('x', 1) && !hops('x', 2))
})
