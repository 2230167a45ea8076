// Regression: GET and PATCH /api/v1/contacts/batch answered 404, and every other method's 405 listed
// `Allow: GET, POST, PATCH`, where the path has POST only.
// Found by: Schemathesis on the batch route (issue #29).
// How it showed: the router keeps a tree per method; for GET and PATCH the only route that fits
// /contacts/batch is /contacts/:id, which took "batch" for an id (not a UUID: 404); the 405 of the other methods
// listed the methods whose routes fit the path, GET and PATCH of /contacts/:id among them.
// Fix: a path that a route names without parameters belongs to its routes (src/errors/envelope.ts,
// StaticPaths): another method on it is 405 with their methods in Allow, before a parametric sibling runs.
// Without the fix the first test fails on GET, PATCH and on the Allow of every other method.
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

t.test('every method a parameterless path of the document lacks is 405 with its methods in Allow', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, unknown>>
  }
  const paths = Object.entries(document.paths).filter(([path]) => !path.includes('{'))
  t.ok(
    paths.some(([path]) => path === '/api/v1/contacts/batch'),
    'the batch path is among them',
  )
  for (const [path, operations] of paths) {
    const documented = METHODS.filter((method) => method.toLowerCase() in operations)
    for (const method of METHODS.filter((one) => !documented.includes(one))) {
      for (const url of [path, `${path}/`]) {
        const res = await request(app, key, { method, url })
        t.same(
          [res.statusCode, res.headers.allow, res.json().error.code],
          [405, documented.join(', '), 'method_not_allowed'],
          `${method} ${url}`,
        )
      }
    }
  }
})

t.test('a parametric route still takes the paths no route names without parameters', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, {
    method: 'POST',
    url: '/api/v1/contacts',
    payload: { email: 'batch@example.it' },
  })
  const id = created.json().id as string
  t.equal((await request(app, key, { method: 'GET', url: `/api/v1/contacts/${id}` })).statusCode, 200)
  t.equal((await request(app, key, { method: 'GET', url: '/api/v1/contacts/batches' })).statusCode, 404, 'no id')
  const put = await request(app, key, { method: 'PUT', url: `/api/v1/contacts/${id}` })
  t.same([put.statusCode, put.headers.allow], [405, 'GET, PATCH, DELETE'])
  // The router decodes the path before it compares it with a route's: so does the check.
  const encoded = await request(app, key, { method: 'GET', url: '/api/v1/contacts/%62atch' })
  t.same([encoded.statusCode, encoded.headers.allow], [405, 'POST'])
})
