// Every API answer, success or error, tells caches not to store it and browsers not to sniff its type.
import t from 'tap'
import { build, createTenantWithKey, request } from '../../helper.ts'

const LIST = '/api/v1/contacts'

t.test('no-store and nosniff on every API answer', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '3' })
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'a@x.io' } })
  const answers = {
    'list 200': await request(app, key, { method: 'GET', url: LIST }),
    'create 201': created,
    'get 200': await request(app, key, { method: 'GET', url: `${LIST}/${created.json().id}` }),
    'rate limited 429': await request(app, key, { method: 'GET', url: LIST }),
    'no key 401': await app.inject({ method: 'GET', url: LIST }),
    'unknown route 404': await app.inject({ method: 'GET', url: '/api/v1/nothing' }),
    'bad body 400': await request(app, key, { method: 'POST', url: LIST, payload: '{' }),
    'readiness 200': await app.inject({ method: 'GET', url: '/ready' }),
  }
  t.equal(answers['rate limited 429'].statusCode, 429)
  for (const [what, res] of Object.entries(answers)) {
    t.equal(res.headers['cache-control'], 'no-store', `${what}: Cache-Control`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: X-Content-Type-Options`)
  }
})

t.test("the reference page's static files may be cached", async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })
  t.equal(res.statusCode, 200)
  t.not(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['x-content-type-options'], 'nosniff')
})
