// Regression: the contract check failed a correct 404 for an id path with extra slashes.
// Found by: the hostile-input fuzzing in CI (seed 52424983): GET /api/v1/contacts/c5168*//?%F1%8E%95%B5.
// How it showed: the router matches no route for `/contacts/<id>//` and answers the routing 404 (before
// authentication, so without rate-limit headers); openapi-backend's path matcher ignores the trailing slashes
// and judged that answer as GET /contacts/{id}'s 404, whose rate-limit headers are required.
// Fix: the suite's contract check (test/contract.ts) treats an answer of the router's 404/405 handler as off the
// document: the envelope, a documented code, Allow on a 405. The server's answer was right and is unchanged.
// Without the fix, build()'s contract hook fails this test.
import t from 'tap'
import { contractViolations } from '../contract.ts'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('an id path with extra slashes is the routing 404, in the envelope', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'slash@x.io' } })
  for (const url of [`${LIST}/${created.json().id}//`, `${LIST}/c5168*//?%F1%8E%95%B5`]) {
    const res = await request(app, key, { method: 'GET', url })
    t.equal(res.statusCode, 404, `${url}: 404`)
    t.same(res.json().error.code, 'not_found', `${url}: not_found in the envelope`)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: the headers every answer carries`)
  }
})

t.test(
  'the contract check: a routed answer is judged by its operation, a routing answer off the document',
  async (t) => {
    const exchange = {
      method: 'GET',
      url: '/api/v1/contacts/c5168//',
      status: 404,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ error: { code: 'not_found', message: 'Contatto non trovato.' } }),
    }
    t.match(
      (await contractViolations({ ...exchange, route: '/api/v1/contacts/:id' })).join(),
      /X-RateLimit-Limit is required/,
    )
    t.same(await contractViolations({ ...exchange, route: null }), [])
  },
)
