// Regression: the contract check failed a correct 404 for GET /api/v1/contacts//.
// Found by: the hostile-input fuzzing in CI (seed 1425652183).
// How it showed: the router drops one trailing slash and serves `/contacts/` + an empty id as GET /contacts/{id},
// whose 404 (after authentication and counting) is documented; openapi-backend's path matcher ignores the
// slashes and judged that answer as the list's, which has no 404.
// Fix: the suite's contract check (test/contract.ts) finds the operation from the route the router served, and
// from the URL only when it has no route. The server's answer was right and is unchanged.
// Without the fix, build()'s contract hook fails the first test.
import t from 'tap'
import { contractViolations } from '../contract.ts'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('GET /contacts// is GET /contacts/{id} with an empty id: 404 after authentication', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const res = await request(app, key, { method: 'GET', url: `${LIST}//` })
  t.equal(res.statusCode, 404)
  t.equal(res.json().error.code, 'not_found', 'not_found in the envelope')
  t.ok(res.headers['x-ratelimit-limit'], 'counted like any request for an id')
  t.equal(res.headers['cache-control'], 'no-store', 'the headers every answer carries')
})

t.test('the contract check judges an answer by the route that served it', async (t) => {
  const exchange = {
    method: 'GET',
    url: '/api/v1/contacts//',
    status: 404,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '59',
      'x-ratelimit-reset': '60',
      'x-request-id': 'r1',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    payload: JSON.stringify({ error: { code: 'not_found', message: 'Risorsa non trovata.' } }),
  }
  t.match((await contractViolations(exchange)).join(), /status 404 is not documented for listContacts/, 'by URL')
  t.same(await contractViolations({ ...exchange, route: '/api/v1/contacts/:id' }), [], 'by route: getContact')
})
