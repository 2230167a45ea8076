// Regression: an erasure or a webhook's removal sent with `Content-Type: application/json` and no body was refused
// (400 invalid_body, a status the document does not give for them), and nothing was deleted.
// Found by: an outside tester (issue #30): many HTTP client wrappers label every request JSON.
// Fix: a DELETE's body, of any type, is ignored, as a GET's is (src/plugins/app/json-body.ts); elsewhere a body
// that is not JSON is still refused.
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('a DELETE with a body, empty or not, JSON or not, does what a bare DELETE does', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', WEBHOOKS_ALLOW_INSECURE: 'true' })
  const { key } = await createTenantWithKey(app, {
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write', 'contacts:erase', 'webhooks:manage'],
  })
  for (const [label, payload, type] of [
    ['empty', '', 'application/json'],
    ['an object', '{"why":"asked"}', 'application/json'],
    ['not JSON', 'garbage', 'application/json'],
    ['of text', 'abcd', 'text/plain'],
    ['of XML', '<why>asked</why>', 'application/xml'],
  ] as const) {
    const json = { 'content-type': type }
    const created = await request(app, key, {
      method: 'POST',
      url: '/api/v1/contacts',
      payload: { email: `via-${label.replaceAll(' ', '-')}@example.it` },
    })
    const id = created.json().id
    const erased = await request(app, key, { method: 'DELETE', url: `/api/v1/contacts/${id}`, headers: json, payload })
    t.equal(erased.statusCode, 204, `the erasure with a body ${label}: ${erased.body}`)
    t.equal((await request(app, key, { method: 'GET', url: `/api/v1/contacts/${id}` })).statusCode, 404, 'erased')

    const hook = await request(app, key, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] },
    })
    t.equal(hook.statusCode, 201, hook.body)
    const removed = await request(app, key, {
      method: 'DELETE',
      url: `/api/v1/webhooks/${hook.json().id}`,
      headers: json,
      payload,
    })
    t.equal(removed.statusCode, 204, `the webhook's removal with a body ${label}: ${removed.body}`)
  }
  const text = await request(app, key, {
    method: 'POST',
    url: '/api/v1/contacts',
    headers: { 'content-type': 'text/plain' },
    payload: '{"email":"testo@example.it"}',
  })
  t.equal(text.statusCode, 400, 'a POST of text is still refused')
  t.equal(text.json().error.code, 'invalid_body')
})
