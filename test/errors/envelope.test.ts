import t from 'tap'
import { errors } from '../../src/errors/catalogue.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

t.test('every error is the Italian envelope', async (t) => {
  const { app } = await build(t, { BODY_LIMIT: '2048' })
  const { key } = await createTenantWithKey(app)

  const unknownRoute = await app.inject({ method: 'GET', url: '/nope' })
  t.equal(unknownRoute.statusCode, 404)
  t.same(unknownRoute.json(), { error: { code: 'not_found', message: 'Risorsa non trovata.' } })
  const unknownMethod = await request(app, key, {
    method: 'PUT',
    url: `${LIST}/00000000-0000-4000-8000-000000000000`,
  })
  t.equal(unknownMethod.statusCode, 405, 'a known path with another method')
  t.equal(unknownMethod.json().error.code, 'method_not_allowed')
  t.equal(unknownMethod.headers.allow, 'GET, PATCH, DELETE')

  const bodies: [string, Record<string, string>, string | Buffer, number, string][] = [
    ['malformed JSON', { 'content-type': 'application/json' }, '{"email":', 400, 'invalid_body'],
    ['empty JSON body', { 'content-type': 'application/json' }, '', 400, 'invalid_body'],
    ['text content type', { 'content-type': 'text/plain' }, '{"email":"a@x.io"}', 400, 'invalid_body'],
    ['form content type', { 'content-type': 'application/x-www-form-urlencoded' }, 'email=a@x.io', 400, 'invalid_body'],
    [
      'proto key',
      { 'content-type': 'application/json' },
      '{"email":"a@x.io","__proto__":{"x":1}}',
      400,
      'invalid_body',
    ],
    [
      'constructor.prototype',
      { 'content-type': 'application/json' },
      '{"email":"a@x.io","constructor":{"prototype":{"x":1}}}',
      400,
      'invalid_body',
    ],
    [
      'too large',
      { 'content-type': 'application/json' },
      JSON.stringify({ email: 'a@x.io', firstName: 'x'.repeat(5000) }),
      413,
      'payload_too_large',
    ],
  ]
  for (const [name, headers, payload, status, code] of bodies) {
    const res = await request(app, key, { method: 'POST', url: LIST, headers, payload })
    t.equal(res.statusCode, status, name)
    t.equal(res.json().error.code, code, name)
    t.match(res.json().error.message, /[a-zàèéìòù]/, name)
    t.notMatch(res.json().error.message, /\b(must|should|Unexpected|body)\b/, `${name}: no English`)
  }
  const noBody = await request(app, key, { method: 'POST', url: LIST })
  t.equal(noBody.statusCode, 400)
  t.equal(noBody.json().error.code, 'invalid_body')
  t.equal(await app.db.prisma.contact.count(), 0, 'nothing created')
  t.equal(({} as Record<string, unknown>).x, undefined, 'no prototype pollution')
})

t.test('an unexpected failure is a generic 500, logged with the request id', async (t) => {
  const lines: string[] = []
  const { app } = await build(t, { LOG_LEVEL: 'error' }, { write: (line: string) => lines.push(line) })
  const { key } = await createTenantWithKey(app)
  // Make the repository fail the way a bug would.
  app.contacts.list = async () => {
    throw new Error('secret internal detail at /srv/db.ts:42')
  }
  const res = await request(app, key, { method: 'GET', url: LIST, headers: { 'x-request-id': 'req-123' } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: { code: 'internal', message: 'Errore interno del server. Riprova più tardi.' } })
  t.notMatch(res.body, /secret|srv|stack/)
  t.equal(res.headers['x-request-id'], 'req-123', 'the request id is returned')
  const entry = lines.map((line) => JSON.parse(line)).find((e) => e.msg === 'request failed')
  t.ok(entry, 'the failure is logged')
  t.equal(entry.reqId, 'req-123')
  t.match(entry.err.message, /secret internal detail/)
  t.notMatch(lines.join('\n'), new RegExp(key), 'the key is never logged')
})

// Found by an outsider: every batch refused with 503 server_busy was logged as an error with its stack (522 lines
// from one burst), burying real failures under foreseen backpressure.
t.test('a batch refused as server_busy is logged at info, without a stack', async (t) => {
  const lines: string[] = []
  const { app } = await build(t, { LOG_LEVEL: 'info' }, { write: (line: string) => lines.push(line) })
  const { key } = await createTenantWithKey(app)
  app.contacts.list = async () => {
    throw errors.serverBusy(3)
  }
  const res = await request(app, key, { method: 'GET', url: LIST })
  t.equal(res.statusCode, 503)
  t.equal(res.json().error.code, 'server_busy')
  const entries = lines.map((line) => JSON.parse(line))
  t.notOk(
    entries.some((e) => e.level >= 50),
    'nothing at error level',
  )
  t.ok(
    entries.some((e) => e.level === 30 && /refused/.test(e.msg) && e.err === undefined),
    'one info line, no error object',
  )
})
