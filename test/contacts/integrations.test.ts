// What integrations need beyond the specification: no lost updates (ETag, If-Match, If-None-Match), finding a
// contact by email, and per-tenant rate limits. Safe retries of POST are in test/idempotency/.
import t from 'tap'
import { setTenantRateLimit } from '../../src/admin/tenants.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

t.test('ETag, If-None-Match and If-Match: no lost updates', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'etag@x.io' } })
  const url = `${LIST}/${created.json().id}`
  t.match(created.headers.etag, /^"v\d+"$/, 'a strong ETag on 201')
  const read = await request(app, key, { method: 'GET', url })
  t.equal(read.headers.etag, created.headers.etag, 'the same on GET')
  const notModified = await request(app, key, {
    method: 'GET',
    url,
    headers: { 'if-none-match': String(read.headers.etag) },
  })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '', 'no body')
  t.equal(notModified.headers.etag, read.headers.etag)
  const weak = await request(app, key, { method: 'GET', url, headers: { 'if-none-match': `W/${read.headers.etag}` } })
  t.equal(weak.statusCode, 304, 'If-None-Match compares weakly')
  const other = await request(app, key, { method: 'GET', url, headers: { 'if-none-match': '"v999"' } })
  t.equal(other.statusCode, 200, 'another ETag: the contact')
  // Entity tags are opaque strings (RFC 9110): "v01" is another tag than "v1", whatever number it spells.
  const padded = String(read.headers.etag).replace('"v', '"v00')
  const paddedRead = await request(app, key, { method: 'GET', url, headers: { 'if-none-match': padded } })
  t.equal(paddedRead.statusCode, 200, `If-None-Match: ${padded} is not ${read.headers.etag}`)

  const patch = (ifMatch: string, payload: object) =>
    request(app, key, { method: 'PATCH', url, payload, headers: { 'if-match': ifMatch } })
  const changed = await patch(String(read.headers.etag), { stage: 'customer' })
  t.equal(changed.statusCode, 200)
  t.not(changed.headers.etag, read.headers.etag, 'a change moves the ETag')
  const stale = await patch(String(read.headers.etag), { stage: 'lead' })
  t.equal(stale.statusCode, 412)
  t.equal(stale.json().error.code, 'precondition_failed')
  t.equal((await request(app, key, { method: 'GET', url })).json().stage, 'customer', 'nothing changed')
  t.equal((await patch(`W/${changed.headers.etag}`, { stage: 'lead' })).statusCode, 412, 'If-Match is strong')
  const paddedMatch = String(changed.headers.etag).replace('"v', '"v0')
  t.equal((await patch(paddedMatch, { stage: 'lead' })).statusCode, 412, `If-Match: ${paddedMatch} is another tag`)
  t.equal((await patch('"v2147483648"', { stage: 'lead' })).statusCode, 412, 'a version no contact can have')
  t.equal((await patch('"v99999999999999"', {})).statusCode, 412)
  t.equal((await patch('*', { stage: 'lead' })).statusCode, 200, 'If-Match: * for any existing contact')
  const gone = `${LIST}/00000000-0000-4000-8000-000000000000`
  t.equal(
    (await request(app, key, { method: 'PATCH', url: gone, payload: {}, headers: { 'if-match': '"v1"' } })).statusCode,
    404,
  )
})

t.test('two writers racing with one ETag: exactly one wins each round', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'race@x.io' } })
  const url = `${LIST}/${created.json().id}`
  let etag = String(created.headers.etag)
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(
      // Names new in every round: a PATCH that changes nothing writes nothing, and would not race.
      [`Anna ${round}`, `Bruno ${round}`].map((firstName) =>
        request(app, key, { method: 'PATCH', url, payload: { firstName }, headers: { 'if-match': etag } }),
      ),
    )
    const statuses = answers.map((res) => res.statusCode).sort()
    t.same(statuses, [200, 412], `round ${round}: one 200, one 412`)
    const winner = answers.find((res) => res.statusCode === 200)
    const stored = await request(app, key, { method: 'GET', url })
    t.equal(stored.json().firstName, winner?.json().firstName, "the stored name is the winner's")
    etag = String(stored.headers.etag)
  }
})

t.test('finding a contact by email', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const other = await createTenantWithKey(app, { name: 'Other' })
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'Anna.Rossi@Example.it' } })
  await request(app, other.key, { method: 'POST', url: LIST, payload: { email: 'anna.rossi@example.it' } })
  const find = (k: string, query: string) => request(app, k, { method: 'GET', url: `${LIST}?${query}` })
  const found = await find(key, 'email=ANNA.ROSSI%40example.IT')
  t.equal(found.statusCode, 200)
  t.same(
    found.json().data.map((c: { email: string }) => c.email),
    ['Anna.Rossi@Example.it'],
    'without regard to case, only this tenant',
  )
  t.same((await find(key, 'email=nessuno%40example.it')).json(), { data: [], next: null }, 'none: an empty page')
  t.same((await find(key, 'email=anna.rossi%40example.it&stage=customer')).json().data, [], 'with other filters')
  const invalid = await find(key, 'email=not-an-email')
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().error.code, 'invalid_query')
})

t.test("a tenant's own rate limit, in the headers and the 429", async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '5' })
  const { key, tenantId } = await createTenantWithKey(app)
  await setTenantRateLimit(app.db.prisma, tenantId, 2)
  app.apiKeys.invalidateAll()
  const answers = []
  for (let i = 0; i < 3; i++) answers.push(await request(app, key, { method: 'GET', url: LIST }))
  t.same(
    answers.map((res) => res.statusCode),
    [200, 200, 429],
  )
  t.equal(answers[0]?.headers['x-ratelimit-limit'], '2', "the tenant's limit in the headers")
  t.match(answers[2]?.json().error.message, /Limite di 2 richieste/, 'and in the message')
  await setTenantRateLimit(app.db.prisma, tenantId, null)
  app.apiKeys.invalidateAll()
  const back = await request(app, key, { method: 'GET', url: LIST })
  t.equal(back.headers['x-ratelimit-limit'], '5', 'back to the default')
})
