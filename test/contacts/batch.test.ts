// POST /api/v1/contacts/batch: create or update by email, one result per item, each item all or nothing; the
// whole request refused only when it is not a batch; events like single writes; races and walks during imports.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { BATCH_BODY_LIMIT } from '../../src/contacts/batch/model.ts'
import { BatchRepository } from '../../src/contacts/batch/repository.ts'
import { CATALOGUE } from '../../src/errors/catalogue.ts'
import { MAX_JSON_DEPTH } from '../../src/plugins/app/json-shape.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { largestBatchBody, largestEmail } from '../largest-batch.ts'

const BATCH = '/api/v1/contacts/batch'
const LIST = '/api/v1/contacts'

interface Result {
  status: number
  contact?: Record<string, unknown> & { id: string; email: string; tags: string[]; updatedAt: string }
  error?: { code: string; message: string }
}
interface Answer {
  results: Result[]
  created: number
  updated: number
  unchanged: number
  failed: number
}

type App = Awaited<ReturnType<typeof build>>['app']

async function upsert(app: App, key: string, contacts: unknown, headers: Record<string, string> = {}) {
  return request(app, key, { method: 'POST', url: BATCH, payload: { contacts }, headers })
}

async function imported(app: App, key: string, contacts: unknown): Promise<Answer> {
  const res = await upsert(app, key, contacts)
  if (res.statusCode !== 200) throw new Error(`batch: ${res.statusCode} ${res.body}`)
  return res.json() as Answer
}

/** The ids of a walk of the list, following `next` at `limit` a page. */
async function walk(app: App, key: string, limit: number): Promise<string[]> {
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const url: string = `${LIST}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page = (await request(app, key, { method: 'GET', url })).json() as {
      data: { id: string }[]
      next: string | null
    }
    seen.push(...page.data.map((c) => c.id))
    cursor = page.next
  } while (cursor !== null)
  return seen
}

async function etagOf(app: App, key: string, id: string) {
  return (await request(app, key, { method: 'GET', url: `${LIST}/${id}` })).headers.etag
}

async function eventCount(app: App, key: string) {
  const res = await request(app, key, { method: 'GET', url: '/api/v1/events?limit=200' })
  return (res.json() as { data: unknown[] }).data.length
}

t.test('every kind of result in one batch, each item on its own', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip', 'newsletter'] })
  const post = async (payload: object) =>
    (await request(app, key, { method: 'POST', url: LIST, payload })).json() as { id: string; updatedAt: string }
  const anna = await post({ email: 'Anna.Rossi@example.it', firstName: 'Anna', tags: ['newsletter'] })
  const archived = await post({ email: 'vecchio@example.it' })
  const still = await post({ email: 'fermo@example.it', firstName: 'Fermo', tags: ['vip'] })
  await app.db.prisma.contact.updateMany({ where: { id: archived.id }, data: { archivedAt: new Date() } })
  const annaEtag = await etagOf(app, key, anna.id)
  const eventsBefore = await eventCount(app, key)

  const answer = await imported(app, key, [
    {
      email: 'nuovo@example.it',
      firstName: 'Nuovo',
      phone: '+39 02 123',
      consentType: 'contract',
      emailStatus: 'unsubscribed',
      stage: 'customer',
      tags: ['vip'],
    },
    { email: 'anna.rossi@EXAMPLE.it', lastName: 'Rossi', tags: ['vip'] },
    { email: 'VECCHIO@example.it', stage: 'ex_customer' },
    { email: 'non-un-indirizzo' },
    { email: 'altro@example.it', tags: ['vip', 'sconosciuto', 'ignoto'] },
    { email: 'NUOVO@example.it', firstName: 'Doppione' },
    'non un oggetto',
    { email: 'extra@example.it', colore: 'blu' },
    { email: 'Fermo@example.it', firstName: 'Fermo', tags: ['vip'] },
  ])

  t.same(
    answer.results.map((r) => r.status),
    [201, 200, 200, 400, 400, 400, 400, 400, 200],
  )
  t.same(
    { created: answer.created, updated: answer.updated, unchanged: answer.unchanged, failed: answer.failed },
    { created: 1, updated: 2, unchanged: 1, failed: 5 },
  )
  const [made, updated, unarchived, invalid, unknownTag, duplicate, notObject, unknownField, same] = answer.results
  t.match(made?.contact, {
    email: 'nuovo@example.it',
    firstName: 'Nuovo',
    lastName: null,
    phone: '+39 02 123',
    emailStatus: 'unsubscribed',
    stage: 'customer',
    source: 'api',
    consentType: 'contract',
    tags: ['vip'],
    archivedAt: null,
  })
  t.equal(made?.contact?.acquiredAt, made?.contact?.createdAt, 'acquiredAt is the creation instant')
  t.equal(updated?.contact?.id, anna.id, 'an email in another case names the same contact')
  t.equal(updated?.contact?.email, 'Anna.Rossi@example.it', 'the stored email keeps its spelling')
  t.match(updated?.contact, { firstName: 'Anna', lastName: 'Rossi', tags: ['newsletter', 'vip'] })
  t.not(await etagOf(app, key, anna.id), annaEtag, 'the ETag moved')
  t.ok((updated?.contact?.updatedAt ?? '') > anna.updatedAt, 'updatedAt moved')
  t.equal(unarchived?.contact?.id, archived.id, 'an archived contact is matched too')
  t.match(unarchived?.contact, { stage: 'ex_customer', archivedAt: String })
  t.equal(invalid?.error?.code, 'invalid_body')
  t.match(invalid?.error?.message, /"contacts\[3\]\.email"/, 'the message names the item and the field')
  t.equal(unknownTag?.error?.code, 'unknown_tag')
  t.match(unknownTag?.error?.message, /contacts\[4\]\.tags.*"sconosciuto", "ignoto"/)
  t.notMatch(unknownTag?.error?.message, /"vip"/, 'only the unknown tags are named')
  t.equal(duplicate?.error?.code, 'duplicate_in_batch')
  t.match(duplicate?.error?.message, /contacts\[5\]\.email.*contacts\[0\]/)
  t.match(notObject?.error, { code: 'invalid_body', message: /"contacts\[6\]".*oggetto/ })
  t.match(unknownField?.error, { code: 'invalid_body', message: /"contacts\[7\]\.colore" non è ammesso/ })
  t.equal(same?.contact?.id, still.id)
  t.equal(same?.contact?.updatedAt, still.updatedAt, 'unchanged: updatedAt as it was')

  const emails = (await app.db.prisma.contact.findMany({ where: { tenantId }, select: { email: true } })).map(
    (c) => c.email,
  )
  t.same(
    emails.sort(),
    ['Anna.Rossi@example.it', 'fermo@example.it', 'nuovo@example.it', 'vecchio@example.it'],
    'failed items wrote nothing',
  )
  t.equal(await eventCount(app, key), eventsBefore + 3, 'one event per created or updated item')
})

t.test('a re-run changes nothing: same ETags and updatedAt, no events', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key } = await createTenantWithKey(app, { tags: ['vip'] })
  const items = [
    { email: 'a@example.it', firstName: 'A', tags: ['vip'], emailStatus: 'bounced' },
    { email: 'b@example.it', lastName: null, stage: 'prospect' },
  ]
  const first = await imported(app, key, items)
  t.same([first.created, first.updated, first.unchanged], [2, 0, 0])
  const events = await eventCount(app, key)
  const etags = await Promise.all(first.results.map((r) => etagOf(app, key, r.contact?.id ?? '')))

  const again = await imported(app, key, [{ ...items[0], email: 'A@EXAMPLE.IT' }, items[1]])
  t.same([again.created, again.updated, again.unchanged, again.failed], [0, 0, 2, 0])
  t.same(
    again.results.map((r) => r.contact),
    first.results.map((r) => r.contact),
    'the same contacts, updatedAt included',
  )
  t.same(await Promise.all(first.results.map((r) => etagOf(app, key, r.contact?.id ?? ''))), etags, 'same ETags')
  t.equal(await eventCount(app, key), events, 'no event')

  const onlyKnownTag = await imported(app, key, [{ email: 'a@example.it', tags: ['vip'] }])
  t.equal(onlyKnownTag.unchanged, 1, 'a tag the contact already has changes nothing')
})

t.test('the events of a batch are those of single writes, with the contact as answered', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key } = await createTenantWithKey(app, { tags: ['vip'] })
  await imported(app, key, [{ email: 'x@example.it' }])
  const start = (await request(app, key, { method: 'GET', url: '/api/v1/events?after=now' })).json() as {
    next: string
  }
  const answer = await imported(app, key, [
    { email: 'y@example.it', tags: ['vip'] },
    { email: 'x@example.it', tags: ['vip'] },
  ])
  const feed = (await request(app, key, { method: 'GET', url: `/api/v1/events?after=${start.next}` })).json() as {
    data: { type: string; data: unknown }[]
  }
  t.same(feed.data.map((e) => e.type).sort(), ['contact.created', 'contact.updated'])
  const byId = (id: unknown) => feed.data.find((e) => (e.data as { id: string }).id === id)?.data
  for (const result of answer.results) t.same(byId(result.contact?.id), result.contact, 'the event holds the answer')
})

t.test('the batch stores and records what the triggers it skips would', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip', 'newsletter', 'évent'] })
  const single = await request(app, key, {
    method: 'POST',
    url: LIST,
    payload: { email: 'Single@Example.it', tags: ['vip', 'évent', 'newsletter'] },
  })
  t.equal(single.statusCode, 201)
  const created = await imported(app, key, [{ email: 'Batch@Example.it', tags: ['vip', 'évent', 'newsletter', 'vip'] }])
  const updated = await imported(app, key, [{ email: 'batch@example.it', firstName: 'B', tags: ['vip'] }])
  t.equal(updated.updated, 1)
  const rows = await app.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT c.email, c.email_key = lower(c.email) AS keyed, c.tags, c.acquired_at = c.created_at AS acquired,
       c.updated_at >= c.created_at AS later, c.version,
       (SELECT count(*)::int FROM contact_tags ct WHERE ct.tenant_id = c.tenant_id AND ct.contact_id = c.id) AS links,
       (SELECT array_agg(e.type::text ORDER BY e.occurred_at, e.n) FROM events e
         WHERE e.tenant_id = c.tenant_id AND e.contact_id = c.id) AS events
     FROM contacts c WHERE c.tenant_id = $1::uuid ORDER BY c.email`,
    tenantId,
  )
  const expected = (email: string, version: number, events: string[]) => ({
    email,
    keyed: true,
    tags: ['newsletter', 'vip', 'évent'],
    acquired: true,
    later: true,
    version,
    links: 3,
    events,
  })
  t.same(rows, [
    expected('Batch@Example.it', 2, ['contact.created', 'contact.updated']),
    expected('Single@Example.it', 1, ['contact.created']),
  ])
  t.same(created.results[0]?.contact?.tags, ['newsletter', 'vip', 'évent'], 'tags in code-point order, once each')

  // Statements written by hand get the same triggers: a transaction's events are numbered on from one statement to
  // the next (two rows of one INSERT in their order, then an UPDATE of one), under one number, its tag links follow
  // its tags, and the feed shows them in that order.
  const id = randomUUID()
  const other = randomUUID()
  await app.db.transaction(async (query) => {
    await query(
      'test_insert',
      "INSERT INTO contacts (id, tenant_id, email, tags) VALUES ($1, $2, 'pos@example.it', '{vip}'), ($3, $2, 'pos2@example.it', '{}')",
      [id, tenantId, other],
    )
    await query('test_update', "UPDATE contacts SET tags = '{newsletter}' WHERE tenant_id = $1 AND id = $2", [
      tenantId,
      id,
    ])
  })
  const links = await app.db.prisma.$queryRawUnsafe<{ name: string }[]>(
    'SELECT t.name FROM contact_tags ct JOIN tags t ON t.tenant_id = ct.tenant_id AND t.id = ct.tag_id WHERE ct.tenant_id = $1::uuid AND ct.contact_id = $2::uuid',
    tenantId,
    id,
  )
  t.same(links, [{ name: 'newsletter' }], 'the UPDATE unlinked vip and linked newsletter')
  const all = await app.db.prisma.$queryRawUnsafe<{ n: string; id: string }[]>(
    'SELECT n::text, contact_id::text AS id FROM events WHERE tenant_id = $1::uuid AND contact_id IN ($2::uuid, $3::uuid) ORDER BY n',
    tenantId,
    id,
    other,
  )
  t.same(
    all.map((event) => [event.n, event.id]),
    [
      ['1', id],
      ['2', other],
      ['3', id],
    ],
    "numbered on across statements, in the order of each statement's rows",
  )
  const positions = await app.db.prisma.$queryRawUnsafe<{ txn: string; n: string; type: string }[]>(
    'SELECT txn::text, n::text, type::text FROM events WHERE tenant_id = $1::uuid AND contact_id = $2::uuid ORDER BY n',
    tenantId,
    id,
  )
  t.equal(positions.length, 2)
  t.equal(positions[0]?.txn, positions[1]?.txn, "one number: the transaction's in the tenant's feed")
  t.same(
    positions.map(({ n, type }) => [n, type]),
    [
      ['1', 'contact.created'],
      ['3', 'contact.updated'],
    ],
  )
  const feed = await request(app, key, { method: 'GET', url: '/api/v1/events?limit=200' })
  t.same(
    (feed.json().data as { type: string; data: { id: string } }[]).filter((e) => e.data.id === id).map((e) => e.type),
    ['contact.created', 'contact.updated'],
    'the feed shows them in that order',
  )
})

t.test('requests that are not a batch are refused whole, and write nothing', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const one = { email: 'a@example.it' }
  const cases: [string, Parameters<typeof request>[2], number, RegExp][] = [
    ['no contacts', { method: 'POST', url: BATCH, payload: {} }, 400, /"contacts" è obbligatorio/],
    ['an empty batch', { method: 'POST', url: BATCH, payload: { contacts: [] } }, 400, /contacts/],
    [
      'more than 1,000 items',
      { method: 'POST', url: BATCH, payload: { contacts: Array.from({ length: 1001 }, () => one) } },
      400,
      /contacts/,
    ],
    ['contacts not a list', { method: 'POST', url: BATCH, payload: { contacts: one } }, 400, /lista/],
    ['another member', { method: 'POST', url: BATCH, payload: { contacts: [one], dryRun: true } }, 400, /dryRun/],
    [
      'not JSON',
      { method: 'POST', url: BATCH, payload: '{"contacts": [', headers: { 'content-type': 'application/json' } },
      400,
      /JSON/,
    ],
    [
      'larger than its limit',
      {
        method: 'POST',
        url: BATCH,
        payload: `{"contacts":[{"email":"a@example.it","firstName":"${'x'.repeat(BATCH_BODY_LIMIT)}"}]}`,
        headers: { 'content-type': 'application/json' },
      },
      413,
      /dimensione massima/,
    ],
  ]
  for (const [name, options, status, message] of cases) {
    const res = await request(app, key, options)
    t.equal(res.statusCode, status, name)
    t.match(res.json().error.message, message, name)
  }
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 0, 'nothing was written')
})

t.test('the body limit fits 1,000 of the largest items in ASCII, not in four-byte characters', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key } = await createTenantWithKey(app)
  t.equal(largestEmail('x', 0).length, 254)
  const send = (payload: string) =>
    request(app, key, { method: 'POST', url: BATCH, payload, headers: { 'content-type': 'application/json' } })

  const ascii = largestBatchBody('limite')
  const bytes = Buffer.byteLength(ascii)
  t.ok(bytes <= BATCH_BODY_LIMIT && bytes > BATCH_BODY_LIMIT - 5000, `a body of ${bytes} bytes fills the limit`)
  const res = await send(ascii)
  t.equal(res.statusCode, 200, 'accepted whole')
  const answer = res.json() as Answer
  t.equal(answer.failed, 1000, 'every item checked: their tags do not exist')
  t.equal(answer.results[999]?.error?.code, 'unknown_tag')

  const wide = largestBatchBody('largo', 'emoji')
  t.ok(Buffer.byteLength(wide) > 3 * BATCH_BODY_LIMIT, 'the same items in four-byte characters take over 3 times more')
  const refused = await send(wide)
  t.equal(refused.statusCode, 413)
  t.equal(refused.json().error.code, 'payload_too_large')
  const fitting = Math.floor(1000 * (BATCH_BODY_LIMIT / Buffer.byteLength(wide)))
  const split = await send(largestBatchBody('diviso', 'emoji', fitting))
  t.equal(split.statusCode, 200, `${fitting} of them fit in one batch`)
})

t.test('the README, the API pages, docs/operations.md and the OpenAPI document state the body limit', async (t) => {
  const megabytes = `${(BATCH_BODY_LIMIT / 1e6).toFixed(1)} MB`
  const bytes = BATCH_BODY_LIMIT.toLocaleString('en')
  // Lines break anywhere in the pages.
  const read = (page: string) => readFileSync(page, 'utf8').replace(/\s+/g, ' ')
  t.match(read('README.md'), `of this route, about ${megabytes}, fits 1,000`)
  t.match(read('docs/api-batch.md'), `about ${megabytes} (${bytes} bytes)`)
  t.match(read('docs/api.md'), `the batch import's own limit, about ${megabytes}`)
  t.match(CATALOGUE.payload_too_large.when, `the batch import's own limit (about ${megabytes})`)
  t.match(read('docs/operations.md'), `of at most ${bytes} bytes`)
  const document = JSON.parse(readFileSync('openapi.json', 'utf8'))
  t.match(document.paths['/api/v1/contacts/batch'].post.description, `supera ${BATCH_BODY_LIMIT} byte (413`)
})

t.test('1,000 new contacts in one call: each once in a walk, createdAt distinct and never ahead', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const answer = await imported(
    app,
    key,
    Array.from({ length: 1000 }, (_, i) => ({ email: `persona${i}@example.it` })),
  )
  t.equal(answer.created, 1000)
  const seen = await walk(app, key, 200)
  t.equal(seen.length, 1000, 'every contact on the walk')
  t.equal(new Set(seen).size, 1000, 'none twice')
  const [row] = await app.db.prisma.$queryRawUnsafe<{ distinct: number; ahead: number }[]>(
    `SELECT count(DISTINCT created_at)::int AS distinct,
       extract(epoch FROM max(created_at) - clock_timestamp())::float AS ahead
     FROM contacts WHERE tenant_id = '${tenantId}'::uuid`,
  )
  t.equal(row?.distinct, 1000, 'createdAt unique to the microsecond')
  t.ok((row?.ahead ?? 1) < 1, `the newest createdAt is ${row?.ahead} s from the database clock`)
})

t.test('walks during an import see every contact that existed when they began, once', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key } = await createTenantWithKey(app)
  const before = await imported(
    app,
    key,
    Array.from({ length: 300 }, (_, i) => ({ email: `prima${i}@example.it` })),
  )
  const existing = new Set(before.results.map((r) => r.contact?.id))
  const importing = Promise.all(
    Array.from({ length: 4 }, (_, b) =>
      imported(
        app,
        key,
        Array.from({ length: 250 }, (_, i) => ({ email: `durante${b}-${i}@example.it` })),
      ),
    ),
  )
  const seen = await walk(app, key, 7)
  const during = await importing
  t.ok(
    during.every((a) => a.created === 250),
    'the imports created every contact',
  )
  t.equal(new Set(seen).size, seen.length, 'no contact twice')
  t.same(
    [...existing].filter((id) => !seen.includes(id as string)),
    [],
    'every contact that existed when the walk began',
  )
})

t.test('two batches racing on the same emails: one contact each, never a 500', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip'] })
  await imported(app, key, [{ email: 'gia@example.it' }])
  const emails = ['gia@example.it', ...Array.from({ length: 199 }, (_, i) => `corsa${i}@example.it`)]
  const [a, b] = await Promise.all([
    upsert(
      app,
      key,
      emails.map((email) => ({ email, firstName: 'A' })),
    ),
    upsert(
      app,
      key,
      [...emails].reverse().map((email) => ({ email: email.toUpperCase(), lastName: 'B', tags: ['vip'] })),
    ),
  ])
  t.same([a.statusCode, b.statusCode], [200, 200])
  const answers = [a.json() as Answer, b.json() as Answer] as const
  t.equal(answers[0].created + answers[1].created, 199, 'each new email created once')
  t.equal(answers[0].failed + answers[1].failed, 0)
  const rows = await app.db.prisma.contact.findMany({ where: { tenantId } })
  t.equal(rows.length, 200, 'one contact per email')
  t.ok(
    rows.every((r) => r.firstName === 'A' && r.lastName === 'B' && r.tags.length === 1),
    'both batches applied to every contact',
  )
})

t.test('Idempotency-Key: a retry gets the first answer and writes nothing', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const items = [{ email: 'uno@example.it' }, { email: 'due@example.it' }]
  const headers = { 'idempotency-key': 'import-2026-11-26' }
  const first = await upsert(app, key, items, headers)
  const retry = await upsert(app, key, items, headers)
  t.equal(retry.statusCode, 200)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.same(retry.json(), first.json(), 'the same answer: 201 twice, not 200')
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 2)
  const other = await upsert(app, key, [{ email: 'tre@example.it' }], headers)
  t.equal(other.json().error.code, 'idempotency_key_reused')
})

t.test('only keys that may write import', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const viewer = await createTenantWithKey(app, { role: 'viewer', scopes: ['contacts:read', 'contacts:write'] })
  const reader = await createTenantWithKey(app, { scopes: ['contacts:read'] })
  t.equal((await upsert(app, viewer.key, [{ email: 'a@example.it' }])).json().error.code, 'insufficient_role')
  t.equal((await upsert(app, reader.key, [{ email: 'a@example.it' }])).json().error.code, 'insufficient_scope')
})

t.test('an Idempotency-Key keeps the answer of a full batch, and hashes nested items', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const items = Array.from({ length: 1000 }, (_, i) => ({ email: `chiave${i}@example.it`, firstName: 'Nome' }))
  const headers = { 'idempotency-key': 'lotto-intero' }
  const first = await upsert(app, key, items, headers)
  t.equal(first.statusCode, 200, 'a 1,000-item answer is kept')
  const retry = await upsert(app, key, items, headers)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body, first.body)
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1000)

  // As deep as a body may nest: the root object and the list hold it, 30 more levels.
  const deep = (levels: number) => `${'['.repeat(levels)}"fondo"${']'.repeat(levels)}`
  const send = (levels: number, idempotencyKey: string) =>
    request(app, key, {
      method: 'POST',
      url: BATCH,
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      payload: `{"contacts":[{"email":"a@example.it"},${deep(levels)}]}`,
    })
  const nested = await send(MAX_JSON_DEPTH - 2, 'annidato')
  t.equal(nested.statusCode, 200)
  t.same(
    (nested.json() as Answer).results.map((r) => r.error?.code ?? r.status),
    [201, 'invalid_body'],
  )
  const deeper = await send(MAX_JSON_DEPTH - 1, 'troppo-annidato')
  t.equal(deeper.statusCode, 400, 'one level more is refused whole')
  t.match(deeper.json().error, {
    code: 'invalid_body',
    message: new RegExp(`JSON .* più di ${MAX_JSON_DEPTH} livelli`),
  })
})

t.test('batches and PATCHes on the same contacts never deadlock', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const shared = (await imported(app, key, [{ email: 'condiviso@example.it' }])).results[0]?.contact?.id
  // Two repositories, as two instances would have: each instance runs one batch of a tenant at a time.
  const instances = [
    new BatchRepository(app.db, app.erasedEmails, app.customFieldRegistry),
    new BatchRepository(app.db, app.erasedEmails, app.customFieldRegistry),
  ]
  const failures: string[] = []
  for (let round = 0; round < 15; round++) {
    const fresh = Array.from({ length: 20 }, (_, i) => ({ email: `r${round}-${i}@example.it` }))
    const outcomes = await Promise.allSettled([
      instances[0]?.upsert(tenantId, [...fresh, { email: 'condiviso@example.it', lastName: `A${round}` }]),
      instances[1]?.upsert(tenantId, [{ email: 'CONDIVISO@example.it', lastName: `B${round}` }]),
      request(app, key, { method: 'PATCH', url: `${LIST}/${shared}`, payload: { firstName: `P${round}` } }),
    ])
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') failures.push(String(outcome.reason))
      else if (outcome.value && 'statusCode' in outcome.value && outcome.value.statusCode !== 200) {
        failures.push(outcome.value.body)
      }
    }
  }
  t.same(failures, [], 'no deadlock, no error')
  t.equal(await app.db.prisma.contact.count({ where: { tenantId } }), 1 + 15 * 20)
})
