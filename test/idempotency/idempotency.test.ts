// Safe retries of POST: a request with an Idempotency-Key runs once per key and tenant, its answer is replayed to
// retries, refusals keep nothing, and races and failures never execute it twice.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { MAX_STORED_ANSWER_BYTES } from '../../src/idempotency/repository.ts'
import { LIMITS } from '../../src/schemas/limits.ts'
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
  const badKey = await post('spazio\u0001', { email: 'k@x.io' })
  t.equal(badKey.statusCode, 400)
  t.equal(badKey.json().error.code, 'invalid_header')
  // Spaces around a key are not part of it, as HTTP has it: ' ordine-3 ' is 'ordine-3', whose answer is replayed.
  const padded = await post(' ordine-3\t', { email: 'later@x.io' })
  t.equal(padded.statusCode, 201)
  t.equal(padded.headers['idempotent-replayed'], 'true')
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
