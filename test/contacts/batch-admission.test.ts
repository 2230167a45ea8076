// What an instance admits of batch imports (src/contacts/batch/admission.ts, docs/operations.md "Batch
// imports"): bodies declaring up to BATCH_CONCURRENCY times the batch body limit at once, and up to the limit per
// tenant, a small batch counting for a sixteenth of it; the rest are refused with 503 server_busy and Retry-After
// before their body is read; a body declaring more than the limit still gets its 413.
import { PassThrough } from 'node:stream'
import t from 'tap'
import { BATCH_BODY_LIMIT } from '../../src/contacts/batch/model.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { until } from '../wait.ts'

const BATCH = '/api/v1/contacts/batch'

type App = Awaited<ReturnType<typeof build>>['app']

/** A batch of one item padded with spaces to `bytes`, whose body is sent as `body` is written. */
function uploading(app: App, key: string, email: string, bytes: number) {
  const json = `{"contacts":[{"email":"${email}"}]}`
  const text = json + ' '.repeat(bytes - json.length)
  const body = new PassThrough()
  const answered = request(app, key, {
    method: 'POST',
    url: BATCH,
    payload: body,
    headers: { 'content-type': 'application/json', 'content-length': String(bytes) },
  })
  return {
    answered,
    /** Sends the first half of the body, and leaves the rest for `finish`. */
    start: () => body.write(text.slice(0, bytes / 2)),
    finish: () => body.end(text.slice(bytes / 2)),
  }
}

/**
 * A body that is never written: an answer to it proves it was not waited for. Should the batch be admitted
 * wrongly, the body ends short after 10 s, so that the test fails instead of waiting for ever.
 */
function unwritten(): PassThrough {
  const body = new PassThrough()
  setTimeout(() => body.end(), 10_000).unref()
  return body
}

t.test('a batch beyond what the instance holds is refused with 503 before its body is read', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000', BATCH_CONCURRENCY: '1' })
  const [first, other] = [await createTenantWithKey(app), await createTenantWithKey(app, { name: 'Altra' })]

  const large = uploading(app, first.key, 'grande@example.it', BATCH_BODY_LIMIT)
  large.start()
  await until(() => app.batchAdmission.held === BATCH_BODY_LIMIT, 'the large batch is admitted')

  const cases = [
    { ...first, why: /di questa organizzazione/ },
    { ...other, why: /il servizio sta già eseguendo/i },
  ]
  for (const { key, why } of cases) {
    const refused = await request(app, key, {
      method: 'POST',
      url: BATCH,
      payload: unwritten(),
      headers: { 'content-type': 'application/json', 'content-length': '100' },
    })
    t.equal(refused.statusCode, 503, 'refused, whichever tenant sends it')
    const retryAfter = Number(refused.headers['retry-after'])
    t.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${refused.headers['retry-after']}`)
    t.match(refused.json().error, { code: 'server_busy', message: new RegExp(`riprova tra ${retryAfter} second`) })
    t.match(refused.json().error.message, why)
  }
  const tooLarge = await request(app, other.key, {
    method: 'POST',
    url: BATCH,
    payload: unwritten(),
    headers: { 'content-type': 'application/json', 'content-length': String(BATCH_BODY_LIMIT + 1) },
  })
  t.equal(tooLarge.statusCode, 413, 'a body beyond the limit is told so, busy or not')

  large.finish()
  t.equal((await large.answered).statusCode, 200, 'the admitted batch is answered')
  await until(() => app.batchAdmission.held === 0, 'the answered batch gives its share back')
  t.pass('the answered batch gives its share back')
  const after = await request(app, other.key, {
    method: 'POST',
    url: BATCH,
    payload: { contacts: [{ email: 'dopo@example.it' }] },
  })
  t.equal(after.statusCode, 200, 'the next one is admitted')
})

t.test('small batches count for a sixteenth of the limit each, and give it back however they end', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000', BATCH_CONCURRENCY: '1' })
  const { key } = await createTenantWithKey(app)
  const small = Array.from({ length: 16 }, (_, i) => uploading(app, key, `piccolo${i}@example.it`, 1000))
  for (const batch of small) batch.start()
  const share = Math.floor(BATCH_BODY_LIMIT / 16)
  await until(() => app.batchAdmission.held === 16 * share, 'sixteen small batches are admitted')
  const seventeenth = await request(app, key, {
    method: 'POST',
    url: BATCH,
    payload: unwritten(),
    headers: { 'content-type': 'application/json', 'content-length': '1000' },
  })
  t.equal(seventeenth.statusCode, 503, 'the seventeenth is refused')
  for (const batch of small) batch.finish()
  t.same(
    (await Promise.all(small.map((batch) => batch.answered))).map((res) => res.statusCode),
    Array(16).fill(200),
    'sixteen small batches were held at once and answered',
  )

  const refusals = [
    { payload: '{"contacts": [', status: 400 },
    { payload: '{"contacts": []}', status: 400 },
    { payload: `{"contacts":[${'['.repeat(40)}${']'.repeat(40)}]}`, status: 400 },
  ]
  for (const { payload, status } of refusals) {
    const res = await request(app, key, {
      method: 'POST',
      url: BATCH,
      payload,
      headers: { 'content-type': 'application/json' },
    })
    t.equal(res.statusCode, status)
  }
  await until(() => app.batchAdmission.held === 0, 'refused batches give their share back too')
  t.pass('refused batches give their share back too')
})

t.test("a tenant holds one largest batch's worth, and leaves the rest to the others", async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000', BATCH_CONCURRENCY: '2' })
  const [first, second] = [await createTenantWithKey(app), await createTenantWithKey(app, { name: 'Seconda' })]
  const held = [uploading(app, first.key, 'uno@example.it', BATCH_BODY_LIMIT)]
  held[0]?.start()
  await until(() => app.batchAdmission.held === BATCH_BODY_LIMIT, "the first tenant's batch is admitted")
  const again = await request(app, first.key, {
    method: 'POST',
    url: BATCH,
    payload: unwritten(),
    headers: { 'content-type': 'application/json', 'content-length': String(BATCH_BODY_LIMIT) },
  })
  t.equal(again.statusCode, 503, "the first tenant's second one is refused")
  held.push(uploading(app, second.key, 'due@example.it', BATCH_BODY_LIMIT))
  held[1]?.start()
  await until(() => app.batchAdmission.held === 2 * BATCH_BODY_LIMIT, "the second tenant's batch is admitted")
  t.pass("the second tenant's batch is admitted beside it")
  for (const batch of held) batch.finish()
  t.same(
    (await Promise.all(held.map((batch) => batch.answered))).map((res) => res.statusCode),
    [200, 200],
  )
})

t.test('a body of undeclared length counts for the whole limit', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000', BATCH_CONCURRENCY: '2' })
  const { key } = await createTenantWithKey(app)
  const body = new PassThrough()
  // No Content-Length: the body arrives chunked, its size unknown until its end.
  const answered = request(app, key, {
    method: 'POST',
    url: BATCH,
    payload: body,
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  })
  body.write('{"contacts":[')
  await until(() => app.batchAdmission.held === BATCH_BODY_LIMIT, 'the batch is admitted for the whole limit')
  t.pass('admitted for the whole limit')
  body.end('{"email":"a-pezzi@example.it"}]}')
  t.equal((await answered).statusCode, 200)
  await until(() => app.batchAdmission.held === 0, 'its share is given back')
  t.pass('and gives it back')
})
