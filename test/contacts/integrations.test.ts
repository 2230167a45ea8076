// What integrations need beyond the specification: safe retries of POST (Idempotency-Key), no lost updates
// (ETag, If-Match, If-None-Match), finding a contact by email, and per-tenant rate limits.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { setTenantRateLimit } from '../../src/admin/tenants.ts'
import { buildApp } from '../../src/app.ts'
import { LIMITS } from '../../src/contacts/model.ts'
import { MAX_STORED_ANSWER_BYTES } from '../../src/idempotency/repository.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

/** A POST of `payload` carrying `idempotencyKey`. */
const postOnce = (app: FastifyInstance, key: string, idempotencyKey: string, payload: object) =>
  request(app, key, { method: 'POST', url: LIST, payload, headers: { 'idempotency-key': idempotencyKey } })

t.test('Idempotency-Key: the first answer is replayed, never executed twice', async (t) => {
  const { app, config, db } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip'] })
  const post = (idempotencyKey: string, payload: object) => postOnce(app, key, idempotencyKey, payload)

  const first = await post('ordine-1', { email: 'anna@x.io', tags: ['vip'] })
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotent-replayed'], 'the original is not a replay')
  const again = await post('ordine-1', { tags: ['vip'], email: 'anna@x.io' })
  t.equal(again.statusCode, 201, 'the same request again (fields in another order)')
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.body, first.body, 'the same body')
  t.equal(again.headers.location, first.headers.location, 'the same Location')
  t.equal(again.headers.etag, first.headers.etag, 'the same ETag')
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1, 'created once')

  const reused = await post('ordine-1', { email: 'other@x.io' })
  t.equal(reused.statusCode, 422)
  t.equal(reused.json().error.code, 'idempotency_key_reused')

  // Refusals of the execution wrote nothing, so they keep nothing: a retry executes again (issue #22: 20,000
  // refused requests used to keep 32 MB of answers).
  const conflictKey = await post('ordine-2', { email: 'ANNA@x.io' })
  t.equal(conflictKey.statusCode, 409)
  const conflictAgain = await post('ordine-2', { email: 'ANNA@x.io' })
  t.equal(conflictAgain.statusCode, 409, 'executed again: still a conflict')
  t.notOk(conflictAgain.headers['idempotent-replayed'], 'not a replay')
  const unknownTag = await post('ordine-4', { email: 'tag@x.io', tags: ['nuovo'] })
  t.equal(unknownTag.json().error.code, 'unknown_tag')
  await app.db.prisma.tag.create({ data: { tenantId, name: 'nuovo' } })
  const afterTag = await post('ordine-4', { email: 'tag@x.io', tags: ['nuovo'] })
  t.equal(afterTag.statusCode, 201, 'once the tag exists, the retry with the same key creates the contact')
  t.notOk(afterTag.headers['idempotent-replayed'])
  const kept = await app.db.query<{ key: string }>('keys', 'SELECT key FROM idempotency_keys WHERE tenant_id = $1', [
    tenantId,
  ])
  t.same(kept.map((row) => row.key).sort(), ['ordine-1', 'ordine-4'], 'only answers of creates are kept')

  const refused = await post('ordine-3', { email: 'not an email' })
  t.equal(refused.statusCode, 400, 'a validation refusal happens before the key is looked at')
  t.equal((await post('ordine-3', { email: 'later@x.io' })).statusCode, 201, 'so the key is still free')
  const badKey = await post(' spazio', { email: 'k@x.io' })
  t.equal(badKey.statusCode, 400)
  t.equal(badKey.json().error.code, 'invalid_header')
  // Another process on the same database, as after a restart: the stored answer is still replayed.
  const restarted = await buildApp(config, { database: db.database })
  t.teardown(() => restarted.close())
  await restarted.ready()
  const afterRestart = await postOnce(restarted, key, 'ordine-1', { email: 'anna@x.io', tags: ['vip'] })
  t.equal(afterRestart.statusCode, 201)
  t.equal(afterRestart.body, first.body, 'replayed after a restart')
  t.equal(afterRestart.headers['idempotent-replayed'], 'true')
})

t.test('the largest answer a key can keep fits its bound, and is replayed whole', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  // Four UTF-8 bytes per character, every field at its limit: the largest contact a POST can create.
  const wide = (n: number, seed: number) => String.fromCodePoint(0x1f600 + (seed % 64)).repeat(n)
  const tags = Array.from({ length: LIMITS.tagsPerContact }, (_, i) => `${i}`.padStart(2, '0') + wide(62, i))
  const { key, tenantId } = await createTenantWithKey(app, { tags })
  const payload = {
    email: `${'l'.repeat(64)}@${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(58)}.it`,
    firstName: wide(LIMITS.name, 1),
    lastName: wide(LIMITS.name, 2),
    phone: `+${'1'.repeat(LIMITS.phone - 1)}`,
    consentType: wide(LIMITS.consentType, 3),
    tags,
  }
  t.equal(payload.email.length, LIMITS.email)
  const first = await postOnce(app, key, 'grande', payload)
  t.equal(first.statusCode, 201, first.body.slice(0, 200))
  const [row] = await app.db.query<{ size: number }>(
    'kept_size',
    'SELECT octet_length(body) + octet_length(headers) AS size FROM idempotency_keys WHERE tenant_id = $1',
    [tenantId],
  )
  t.ok(row && row.size <= MAX_STORED_ANSWER_BYTES, `kept ${row?.size} bytes, bound ${MAX_STORED_ANSWER_BYTES}`)
  t.ok(row && row.size > MAX_STORED_ANSWER_BYTES / 2, 'the bound is not loose either')
  const replayed = await postOnce(app, key, 'grande', payload)
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(replayed.body, first.body)
})

t.test('a retry while the first request runs, however long, never executes twice', async (t) => {
  const { app, db } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  // The first request is held inside its execution (as a slow database would hold it) until the gate opens.
  let open = () => {}
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const create = app.contacts.create.bind(app.contacts)
  app.contacts.create = async (...args) => {
    await gate
    return create(...args)
  }
  const send = () => postOnce(app, key, 'lento', { email: 'lento@x.io' })
  const first = send()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const retry = send()
  // On PostgreSQL the retry is told at once; the embedded database's single connection queues it instead.
  const early = db.url ? await retry : null
  if (early) {
    t.equal(early.statusCode, 409)
    t.equal(early.json().error.code, 'idempotency_key_in_use')
  }
  open()
  const original = await first
  t.equal(original.statusCode, 201)
  const later = await (early ? send() : retry)
  t.equal(later.statusCode, 201)
  t.equal(later.headers['idempotent-replayed'], 'true')
  t.equal(later.body, original.body, 'the replay of the original')
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1, 'one contact')
})

t.test('a first request that fails on the server leaves nothing: the retry executes', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const create = app.contacts.create.bind(app.contacts)
  let failures = 1
  app.contacts.create = async (...args) => {
    if (failures-- > 0) throw new Error('lost the database halfway')
    return create(...args)
  }
  const send = () => postOnce(app, key, 'f1', { email: 'fallito@x.io' })
  t.equal((await send()).statusCode, 500)
  const retried = await send()
  t.equal(retried.statusCode, 201, 'executed, not replayed')
  t.notOk(retried.headers['idempotent-replayed'])
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1)
})

t.test('50 concurrent POSTs with one key and one body: one contact, identical answers', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const answers = await Promise.all(
    Array.from({ length: 50 }, () => postOnce(app, key, 'una-sola', { email: 'corsa@x.io' })),
  )
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1, 'one contact')
  const created = answers.filter((res) => res.statusCode === 201)
  const inUse = answers.filter((res) => res.statusCode === 409)
  t.equal(created.length + inUse.length, 50, 'every answer is the original, a replay, or in_use')
  t.equal(created.filter((res) => !res.headers['idempotent-replayed']).length, 1, 'one original')
  t.same([...new Set(created.map((res) => res.body))].length, 1, 'the replays are identical to it')
  for (const res of inUse) t.equal(res.json().error.code, 'idempotency_key_in_use')
})

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
