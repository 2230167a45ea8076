// Regression: a request to an unknown route or method had its body parsed before the route was looked up.
// Found by: the chaos property of the hostile-input fuzzing (docs/reliability-findings.md, "Failures found").
// How it showed: a malformed or oversized body sent to a route that does not exist was answered 400 or 413
// (the body's error) instead of 404.
// Fix: a request no route takes is answered before its body is read: 404 not_found for an unknown path, and
// (since the hardening audit) 405 method_not_allowed for a known path with another method.
// Without the fix the `{` bodies below get 400 and the 70 KB one 413.
import t from 'tap'
import { LIST, referenceNotFound } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('unknown routes are 404 and unknown methods 405, whatever body they carry', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'base@x.io' } })
  const id: string = created.json().id
  const notFound = await referenceNotFound(app, key)
  const json = { 'content-type': 'application/json' }
  for (const [method, url, payload] of [
    ['DELETE', LIST, '{'],
    ['DELETE', `${LIST}/${id}/export`, ''],
    ['PUT', `${LIST}/${id}`, 'x'.repeat(70_000)],
  ] as const) {
    const res = await request(app, key, { method, url, payload, headers: json })
    t.equal(res.statusCode, 405, `${method} ${url} with ${payload.slice(0, 5)}: 405`)
    t.equal(res.json().error.code, 'method_not_allowed', `${method} ${url}: said so, not the body's error`)
  }
  for (const payload of ['{', 'x'.repeat(70_000)]) {
    const res = await request(app, key, { method: 'POST', url: '/api/v2/contacts', payload, headers: json })
    t.equal(res.statusCode, 404, `POST to an unknown path with ${payload.slice(0, 5)}: 404`)
    t.equal(res.body, notFound.body, 'the usual 404 body')
  }
})
