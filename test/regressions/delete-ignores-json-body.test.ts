// Regression: an erasure or a webhook's removal sent with `Content-Type: application/json` and no body was refused
// (400 invalid_body, a status the document does not give for them), and nothing was deleted.
// Found by: an outside tester (issue #30): many HTTP client wrappers label every request JSON.
// Fix: a DELETE's body, of any type, is ignored, as a GET's is (src/plugins/app/json-body.ts); elsewhere a body
// that is not JSON is still refused.
// Then: a body past BODY_LIMIT, labelled JSON or text, or chunked, was refused 413 and nothing erased (an outside
// tester, issue "Changes arrive within a second"); a DELETE's body is now dropped before any parser reads it.
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('a DELETE with a body, empty or not, JSON or not, does what a bare DELETE does', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', WEBHOOKS_ALLOW_INSECURE: 'true', BODY_LIMIT: '4096' })
  const large = JSON.stringify({ why: 'x'.repeat(70_000) })
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
    ['past the body limit', large, 'application/json'],
    ['of text past the body limit', large, 'text/plain'],
    ['of bytes past the body limit', large, 'application/octet-stream'],
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

t.test(
  'over a socket, a DELETE with a chunked body of 10 MB erases, and the connection serves the next request',
  async (t) => {
    const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
    const { key } = await createTenantWithKey(app, {
      role: 'admin',
      scopes: ['contacts:read', 'contacts:write', 'contacts:erase'],
    })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const created = await request(app, key, { method: 'POST', url: '/api/v1/contacts', payload: { email: 'a@b.it' } })
    const chunk = new TextEncoder().encode('x'.repeat(65_536))
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 160) controller.close()
        else {
          sent++
          controller.enqueue(chunk)
        }
      },
    })
    const erased = await fetch(`${address}/api/v1/contacts/${created.json().id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    t.equal(erased.status, 204, await erased.text())
    const after = await fetch(`${address}/api/v1/contacts/${created.json().id}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    t.equal(after.status, 404, 'erased')
  },
)
