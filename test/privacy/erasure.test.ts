// Erasure of a contact (DELETE /api/v1/contacts/:id, issue #31): after it, no table holds the contact's email,
// names, phone or the values of its tenant's own fields (every row of every table read as text; on PostgreSQL, a pg_dump of the database, of every node on
// Citus); the feed walks as before, with the erased contact's events in place and a contact.erased at the end; a
// webhook receives contact.erased signed like every event, and events delivered after the erasure carry nothing
// of the contact; the address cannot come back through POST or a batch; another tenant's contact with the same
// email is untouched; every refusal is the catalogue's envelope; the export holds what rubrica holds of a contact.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook as Verifier } from 'standardwebhooks'
import t from 'tap'
import { archiveContact } from '../../src/admin/contacts.ts'
import { assertEnvelope, LIST } from '../fuzz/support.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import {
  ADMIN_SCOPES,
  anotherInstance,
  DELIVERING,
  dumps,
  FEED,
  type FeedEvent,
  feed,
  HOOKS,
  needlesOf,
  person,
  type Received,
  receiver,
  tracesOf,
  until,
} from './support.ts'

/** A value of the tenant's own field `nota` for `who`, as distinctive as its name. */
const NOTE = (who: { firstName: string }) => `Azalea-Riservata-${who.firstName}`

t.test('after an erasure, no table and no dump holds the contact; the feed and the webhook go on', async (t) => {
  const hook = await receiver(t)
  const { app, db } = await build(t, DELIVERING)
  const { tenantId, key } = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES, tags: ['vip'] })
  const created = await request(app, key, { method: 'POST', url: HOOKS, payload: { url: hook.url } })
  t.equal(created.statusCode, 201, created.body)
  const { secret } = created.json() as { secret: string }
  const who = person('1')
  const other = person('2')
  await app.db.query('', `INSERT INTO custom_fields (tenant_id, name, type) VALUES ($1, 'nota', 'text')`, [tenantId])

  // Created with an Idempotency-Key, patched, written by a batch import with one, archived by an operator.
  const made = await request(app, key, {
    method: 'POST',
    url: LIST,
    headers: { 'idempotency-key': `crea-${who.email}` },
    payload: {
      email: who.email,
      firstName: who.firstName,
      phone: who.phone,
      tags: ['vip'],
      fields: { nota: NOTE(who) },
    },
  })
  t.equal(made.statusCode, 201, made.body)
  const id = (made.json() as { id: string }).id
  const patched = await request(app, key, {
    method: 'PATCH',
    url: `${LIST}/${id}`,
    payload: { lastName: who.lastName },
  })
  t.equal(patched.statusCode, 200, patched.body)
  const batch = await request(app, key, {
    method: 'POST',
    url: `${LIST}/batch`,
    headers: { 'idempotency-key': 'lotto-1' },
    payload: {
      contacts: [
        { email: who.email.toUpperCase(), stage: 'customer' },
        { email: other.email, firstName: other.firstName, lastName: other.lastName, fields: { nota: NOTE(other) } },
      ],
    },
  })
  t.same(
    (batch.json() as { results: { status: number }[] }).results.map((result) => result.status),
    [200, 201],
    batch.body,
  )
  const otherId = (batch.json() as { results: { contact: { id: string } }[] }).results[1]?.contact.id
  await archiveContact(app.db.prisma, tenantId, id)

  const before = await feed(app, key)
  t.equal(before.data.filter((event) => event.data.id === id).length, 4, "the contact's four events")
  await until(
    () => before.data.every((event) => hook.received.some((got) => got.headers['webhook-id'] === event.id)),
    'the events delivered',
  )
  t.not((await tracesOf(app, needlesOf(who))).length, 0, 'the contact is in the database before (the search works)')
  t.not((await tracesOf(app, [NOTE(who)])).length, 0, 'its field’s value too')

  const erased = await request(app, key, { method: 'DELETE', url: `${LIST}/${id}` })
  t.equal(erased.statusCode, 204, erased.body)
  t.equal(erased.body, '', 'no body')

  t.same(
    await tracesOf(app, [...needlesOf(who), NOTE(who)]),
    [],
    'no table holds the email, the names, the phone or the field’s value',
  )
  t.not((await tracesOf(app, needlesOf(other))).length, 0, 'the other contact of the batch is still there')
  if (db.url) {
    for (const dump of await dumps(db.url)) {
      t.ok(dump.includes('PostgreSQL database dump'), 'a dump')
      const lower = dump.toLowerCase()
      t.same(
        [...needlesOf(who), NOTE(who)].filter((needle) => lower.includes(needle.toLowerCase())),
        [],
        'the dump holds none of them',
      )
    }
    t.ok(
      (await dumps(db.url)).some((dump) => dump.toLowerCase().includes(other.email.toLowerCase())),
      'the dump holds the other contact (the search works)',
    )
  }

  // The feed: the same events in the same places, the erased contact's without its data, then contact.erased.
  const after = await feed(app, key)
  t.same(
    after.data.slice(0, before.data.length).map((event) => [event.id, event.type, event.occurredAt]),
    before.data.map((event) => [event.id, event.type, event.occurredAt]),
    'every event kept, in its place',
  )
  for (const [i, event] of after.data.slice(0, before.data.length).entries()) {
    const was = before.data[i] as FeedEvent
    if (was.data.id === id) t.same(event.data, { id, erased: true }, `${event.type}: only the id is left`)
    else t.same(event.data, was.data, `${event.type} of another contact: unchanged`)
  }
  const erasure = after.data.slice(before.data.length)
  t.same(
    erasure.map((event) => [event.type, event.data]),
    [['contact.erased', { id, erased: true }]],
    'one contact.erased, after the rest',
  )
  t.same((await feed(app, key, before.next)).data, erasure, 'a follower at the old end reads contact.erased once')
  const typed = await request(app, key, { method: 'GET', url: `${FEED}?type=contact.erased` })
  t.same((typed.json() as { data: FeedEvent[] }).data, erasure, 'the type filter knows it')

  // The webhook: contact.erased, signed as every event.
  const erasedEvent = erasure[0] as FeedEvent
  await until(
    () => hook.received.some((got) => got.headers['webhook-id'] === erasedEvent.id),
    'contact.erased delivered',
  )
  const delivery = hook.received.find((got) => got.headers['webhook-id'] === erasedEvent.id) as Received
  t.doesNotThrow(() => new Verifier(secret).verify(delivery.body, delivery.headers), 'its signature verifies')
  t.same(JSON.parse(delivery.body), erasedEvent, 'the body is the event, as the feed shows it')

  // Gone: 404 to every route, a second erasure included; the stored answers that held it are gone too.
  for (const [method, url] of [
    ['GET', `${LIST}/${id}`],
    ['PATCH', `${LIST}/${id}`],
    ['DELETE', `${LIST}/${id}`],
    ['GET', `${LIST}/${id}/export`],
  ] as const) {
    const res = await request(app, key, { method, url, ...(method === 'PATCH' && { payload: { stage: 'lead' } }) })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    assertEnvelope(res.json(), 404)
  }
  const retried = await request(app, key, {
    method: 'POST',
    url: LIST,
    headers: { 'idempotency-key': `crea-${who.email}` },
    payload: { email: who.email, firstName: who.firstName, phone: who.phone, tags: ['vip'] },
  })
  t.equal(retried.statusCode, 409, 'a retry of the POST runs again, and is refused')
  t.notOk(retried.headers['idempotent-replayed'], 'not the stored answer')
  t.equal((retried.json() as { error: { code: string } }).error.code, 'contact_erased')
  t.notOk(otherId === undefined)
})

t.test('who may erase and export: admin with the scope; every refusal is the envelope', async (t) => {
  const { app } = await build(t)
  const { tenantId, key: editor } = await createTenantWithKey(app, { role: 'editor', scopes: ADMIN_SCOPES })
  const admin = await addKey(app, tenantId, 'admin', ADMIN_SCOPES)
  const adminWithoutErase = await addKey(app, tenantId, 'admin', ['contacts:read', 'contacts:write'])
  const adminWithoutRead = await addKey(app, tenantId, 'admin', ['contacts:erase'])
  const viewer = await addKey(app, tenantId, 'viewer', ADMIN_SCOPES)
  const made = await request(app, admin, { method: 'POST', url: LIST, payload: { email: 'chi@example.it' } })
  const id = (made.json() as { id: string }).id
  const refusals: [string, string, 'DELETE' | 'GET', string, number, string, RegExp][] = [
    ['an editor', editor, 'DELETE', `${LIST}/${id}`, 403, 'insufficient_role', /ruolo "editor"/],
    ['a viewer', viewer, 'DELETE', `${LIST}/${id}`, 403, 'insufficient_role', /ruolo "viewer"/],
    [
      'an admin without the scope',
      adminWithoutErase,
      'DELETE',
      `${LIST}/${id}`,
      403,
      'insufficient_scope',
      /"contacts:erase"/,
    ],
    ['an editor exporting', editor, 'GET', `${LIST}/${id}/export`, 403, 'insufficient_role', /ruolo "editor"/],
    [
      'an admin exporting without contacts:read',
      adminWithoutRead,
      'GET',
      `${LIST}/${id}/export`,
      403,
      'insufficient_scope',
      /"contacts:read"/,
    ],
    ['an unknown id', admin, 'DELETE', `${LIST}/00000000-0000-4000-8000-000000000000`, 404, 'not_found', /non trovata/],
    ['an id that is not a UUID', admin, 'DELETE', `${LIST}/not-a-uuid`, 404, 'not_found', /non trovata/],
    [
      'an unknown id exported',
      admin,
      'GET',
      `${LIST}/00000000-0000-4000-8000-000000000000/export`,
      404,
      'not_found',
      /non trovata/,
    ],
    ['a query parameter', admin, 'DELETE', `${LIST}/${id}?force=true`, 400, 'invalid_query', /"force"/],
  ]
  for (const [who, key, method, url, status, code, message] of refusals) {
    const res = await request(app, key, { method, url })
    t.equal(res.statusCode, status, `${who}: ${status}`)
    assertEnvelope(res.json(), status, who)
    t.equal((res.json() as { error: { code: string } }).error.code, code, `${who}: ${code}`)
    t.match((res.json() as { error: { message: string } }).error.message, message)
  }
  t.equal((await request(app, admin, { method: 'GET', url: `${LIST}/${id}` })).statusCode, 200, 'nothing was erased')
  t.equal((await request(app, admin, { method: 'DELETE', url: `${LIST}/${id}` })).statusCode, 204, 'the admin may')
  const again = await request(app, admin, { method: 'DELETE', url: `${LIST}/${id}` })
  t.equal(again.statusCode, 404, 'a second erasure of the same id is 404')
  assertEnvelope(again.json(), 404)
})

t.test(
  'an erased address is refused by POST and by a batch, in any case; another tenant keeps its contact',
  async (t) => {
    const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
    const a = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
    const b = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
    const who = person('3')
    const ids: Record<string, string> = {}
    for (const [name, { key }] of Object.entries({ a, b })) {
      const made = await request(app, key, {
        method: 'POST',
        url: LIST,
        payload: { email: who.email, firstName: who.firstName },
      })
      t.equal(made.statusCode, 201)
      ids[name] = (made.json() as { id: string }).id
    }
    const bBefore = await request(app, b.key, { method: 'GET', url: `${LIST}/${ids.b}` })
    const bFeedBefore = await feed(app, b.key)
    t.equal((await request(app, a.key, { method: 'DELETE', url: `${LIST}/${ids.a}` })).statusCode, 204)

    for (const email of [who.email, who.email.toLowerCase(), who.email.toUpperCase()]) {
      const res = await request(app, a.key, { method: 'POST', url: LIST, payload: { email } })
      t.equal(res.statusCode, 409, `POST ${email}`)
      assertEnvelope(res.json(), 409)
      t.match(res.json(), { error: { code: 'contact_erased', message: /cancellato su richiesta dell’interessato/ } })
    }
    const batch = await request(app, a.key, {
      method: 'POST',
      url: `${LIST}/batch`,
      payload: { contacts: [{ email: 'nuovo@example.it' }, { email: who.email.toUpperCase(), firstName: 'Di nuovo' }] },
    })
    t.equal(batch.statusCode, 200)
    const answer = batch.json() as {
      results: { status: number; error?: { code: string; message: string } }[]
      created: number
      failed: number
    }
    t.same(
      answer.results.map((result) => [result.status, result.error?.code]),
      [
        [201, undefined],
        [409, 'contact_erased'],
      ],
      'the erased address alone is refused, with 409 in its result',
    )
    t.match(answer.results[1]?.error?.message, /^Il campo "contacts\[1\]\.email"/)
    t.same([answer.created, answer.failed], [1, 1])
    t.equal(
      await app.db.prisma.contact.count({ where: { tenantId: a.tenantId, emailKey: who.email.toLowerCase() } }),
      0,
      'nothing brought it back',
    )

    // Tenant b: its contact with the same email, its events, its writes: untouched.
    t.same((await request(app, b.key, { method: 'GET', url: `${LIST}/${ids.b}` })).json(), bBefore.json())
    t.same((await feed(app, b.key)).data, bFeedBefore.data, "b's events are as they were")
    const bBatch = await request(app, b.key, {
      method: 'POST',
      url: `${LIST}/batch`,
      payload: { contacts: [{ email: who.email, stage: 'customer' }] },
    })
    t.same(
      (bBatch.json() as { results: { status: number }[] }).results.map((result) => result.status),
      [200],
    )
    t.equal(
      (await request(app, b.key, { method: 'DELETE', url: `${LIST}/${ids.a}` })).statusCode,
      404,
      "a's id is not b's",
    )
  },
)

t.test('the export: the contact as GET, its events as the feed, their deliveries; nothing of others', async (t) => {
  const hook = await receiver(t)
  const { app } = await build(t, DELIVERING)
  const { key } = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
  const webhook = await request(app, key, { method: 'POST', url: HOOKS, payload: { url: hook.url } })
  const webhookId = (webhook.json() as { id: string }).id
  const made = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'export@example.it' } })
  const id = (made.json() as { id: string }).id
  await request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { stage: 'customer' } })
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'altro@example.it' } })
  const events = (await feed(app, key)).data.filter((event) => event.data.id === id)
  t.equal(events.length, 2)
  const attempts = async () =>
    (await request(app, key, { method: 'GET', url: `${HOOKS}/${webhookId}/deliveries` })).json().data as (Record<
      string,
      unknown
    > & { eventId: string })[]
  await until(async () => (await attempts()).length >= 3, 'the three events delivered and recorded')

  const res = await request(app, key, { method: 'GET', url: `${LIST}/${id}/export` })
  t.equal(res.statusCode, 200, res.body)
  const exported = res.json() as {
    exportedAt: string
    contact: unknown
    events: FeedEvent[]
    deliveries: Record<string, unknown>[]
  }
  t.same(Object.keys(exported), ['exportedAt', 'contact', 'events', 'deliveries'])
  t.match(exported.exportedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  t.same(exported.contact, (await request(app, key, { method: 'GET', url: `${LIST}/${id}` })).json(), 'as GET')
  t.same(exported.events, events, 'its events as the feed shows them, oldest first')
  // The deliveries log lists the same attempts, newest first, without the webhook (it is the log's own).
  const log = (await attempts()).filter((attempt) => events.some((event) => event.id === attempt.eventId))
  const fields = ({ eventId, attempt, at, status, outcome }: Record<string, unknown>) => ({
    eventId,
    attempt,
    at,
    status,
    outcome,
  })
  t.same(
    exported.deliveries,
    log.reverse().map((line) => ({ webhookId, receiver: new URL(hook.url).origin, ...fields(line) })),
    'the attempts of its events, with the webhook and its receiver, oldest first',
  )
  t.equal(exported.deliveries.length, 2)
  // Found by an outsider: the export showed the webhook's whole URL (whose path may hold a token) to a key
  // without webhooks:manage, which the webhooks' own routes refuse.
  t.notMatch(res.body, new URL(hook.url).pathname, "the URL's path is not in the export")
})

t.test('events delivered after the erasure carry nothing of the contact', async (t) => {
  const hook = await receiver(t)
  // This instance does not deliver: its events wait for the one started after the erasure.
  const { app } = await build(t, { ...DELIVERING, WEBHOOKS_ENABLED: 'false' })
  const { key } = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
  const registered = await request(app, key, { method: 'POST', url: HOOKS, payload: { url: hook.url } })
  t.equal(registered.statusCode, 201, registered.body)
  const { secret } = registered.json() as { secret: string }
  const who = person('4')
  const made = await request(app, key, { method: 'POST', url: LIST, payload: who })
  const id = (made.json() as { id: string }).id
  await request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { stage: 'customer' } })
  t.equal((await request(app, key, { method: 'DELETE', url: `${LIST}/${id}` })).statusCode, 204)
  const events = (await feed(app, key)).data
  t.same(
    events.map((event) => event.type),
    ['contact.created', 'contact.updated', 'contact.erased'],
  )

  await anotherInstance(t, app, DELIVERING)
  await until(() => hook.received.length >= 3, 'the three events delivered')
  const verifier = new Verifier(secret)
  for (const got of hook.received) {
    t.doesNotThrow(() => verifier.verify(got.body, got.headers), 'signed')
    const body = JSON.parse(got.body) as FeedEvent
    t.same(body.data, { id, erased: true }, `${body.type}: the id alone`)
    for (const needle of needlesOf(who)) t.notOk(got.body.toLowerCase().includes(needle.toLowerCase()))
  }
})

// Found by an outsider: a round of deliveries already read when the erasure committed went on sending the contact,
// up to about three WEBHOOKS_TIMEOUT_MS after the 204. Each wave of a round now looks first at which contacts were
// erased: the contact leaves after the 204 only in a wave that looked before it, within one timeout.
t.test(
  'deliveries under way when the erasure commits: the contact arrives no later than one timeout after the 204',
  async (t) => {
    const timeoutMs = Number(DELIVERING.WEBHOOKS_TIMEOUT_MS)
    const arrivals: Array<{ at: number; body: string }> = []
    const slow = createServer((req, res) => {
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        arrivals.push({ at: performance.now(), body })
        setTimeout(() => res.writeHead(204).end(), 1200)
      })
    })
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise((resolve) => slow.close(resolve)))
    t.teardown(() => slow.closeAllConnections())
    const { port } = slow.address() as AddressInfo
    const { app } = await build(t, { ...DELIVERING, WEBHOOKS_ENABLED: 'false' })
    const { key } = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
    const hook = await request(app, key, { method: 'POST', url: HOOKS, payload: { url: `http://127.0.0.1:${port}/h` } })
    t.equal(hook.statusCode, 201, 'the webhook is registered')
    const who = person('5')
    const id = (await request(app, key, { method: 'POST', url: LIST, payload: who })).json().id as string
    // 32 events: one round, four waves of eight, each held 1.2 s by the receiver.
    for (let i = 0; i < 31; i++) {
      const stage = i % 2 === 0 ? 'customer' : 'lead'
      await request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { stage } })
    }
    await anotherInstance(t, app, DELIVERING)
    await until(() => arrivals.length > 0, 'the first wave under way')
    t.equal((await request(app, key, { method: 'DELETE', url: `${LIST}/${id}` })).statusCode, 204)
    const erasedAt = performance.now()
    await until(() => arrivals.length >= 33, 'every event delivered, contact.erased included')
    const personal = arrivals.filter(({ body }) =>
      needlesOf(who).some((needle) => body.toLowerCase().includes(needle.toLowerCase())),
    )
    const late = arrivals.filter(({ at }) => at > erasedAt + timeoutMs)
    t.ok(late.length > 0, `${late.length} deliveries arrived more than ${timeoutMs} ms after the 204`)
    t.same(
      personal.filter(({ at }) => at > erasedAt + timeoutMs).map(({ at }) => Math.round(at - erasedAt)),
      [],
      'none of them carries the contact',
    )
    t.ok(personal.length < 32, `the contact left in ${personal.length} deliveries, those looked at before the 204`)
  },
)

// Found by an outsider: If-Match was ignored by DELETE, and an irreversible erasure went through a stale ETag.
t.test('an erasure under If-Match erases only the version it names: 412 otherwise, and nothing changes', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app, { role: 'admin', scopes: ADMIN_SCOPES })
  const made = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'etag@example.it' } })
  const id = (made.json() as { id: string }).id
  const etag = made.headers.etag as string
  await request(app, key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { stage: 'customer' } })
  const stale = await request(app, key, { method: 'DELETE', url: `${LIST}/${id}`, headers: { 'if-match': etag } })
  t.equal(stale.statusCode, 412, 'the ETag read before the PATCH')
  assertEnvelope(stale.json(), 412)
  t.equal((stale.json() as { error: { code: string } }).error.code, 'precondition_failed')
  const current = await request(app, key, { method: 'GET', url: `${LIST}/${id}` })
  t.equal(current.statusCode, 200, 'nothing was erased')
  t.equal(await app.db.prisma.erasure.count({ where: { contactId: id } }), 0, 'nor recorded')
  const missing = await request(app, key, {
    method: 'DELETE',
    url: `${LIST}/00000000-0000-4000-8000-000000000000`,
    headers: { 'if-match': etag },
  })
  t.equal(missing.statusCode, 404, 'an unknown id is 404 under If-Match too')
  const erased = await request(app, key, {
    method: 'DELETE',
    url: `${LIST}/${id}`,
    headers: { 'if-match': `"v0", ${current.headers.etag}` },
  })
  t.equal(erased.statusCode, 204, 'the current ETag among others')
  t.equal((await request(app, key, { method: 'GET', url: `${LIST}/${id}` })).statusCode, 404)
})
