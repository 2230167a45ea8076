import t from 'tap'
import { ContactSchema } from '../../src/contacts/model.ts'
import { CONTACT_FIELDS, ISO_MS_Z } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

t.test('create, read, defaults and the Contact shape', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app, { tags: ['vip', 'newsletter', 'zeta'] })

  const res = await request(app, key, {
    method: 'POST',
    url: LIST,
    payload: {
      email: 'Anna.Rossi@Example.it',
      firstName: 'Anna',
      phone: '+39 02 1234 5678',
      tags: ['zeta', 'vip', 'vip'],
    },
  })
  t.equal(res.statusCode, 201)
  const contact = res.json()
  t.same(Object.keys(contact).sort(), CONTACT_FIELDS, 'exactly the documented fields')
  // The repository builds the contact field by field: the schema's order is the answers' order.
  const schemaOrder = Object.keys(ContactSchema.properties)
  t.same(Object.keys(contact), schemaOrder, "201: the fields in the schema's order")
  t.equal(res.headers.location, `/api/v1/contacts/${contact.id}`)
  t.match(contact, {
    email: 'Anna.Rossi@Example.it',
    firstName: 'Anna',
    lastName: null,
    phone: '+39 02 1234 5678',
    emailStatus: 'active',
    stage: 'lead',
    source: 'api',
    consentType: 'unknown',
    tags: ['vip', 'zeta'],
    archivedAt: null,
  })
  for (const field of ['acquiredAt', 'createdAt', 'updatedAt']) t.match(contact[field], ISO_MS_Z, field)
  t.equal(contact.acquiredAt, contact.createdAt, 'acquiredAt = createdAt')

  const read = await request(app, key, { method: 'GET', url: `${LIST}/${contact.id}` })
  t.equal(read.statusCode, 200)
  t.same(read.json(), contact)
  t.same(Object.keys(read.json()), schemaOrder, "GET: the fields in the schema's order")
  t.notMatch(read.body, /"version"/, "the row's version stays out of the answer")
  const patched = await request(app, key, {
    method: 'PATCH',
    url: `${LIST}/${contact.id}`,
    payload: { stage: 'customer' },
  })
  t.equal(patched.statusCode, 200)
  t.same(Object.keys(patched.json()), schemaOrder, "PATCH: the fields in the schema's order")

  const withConsent = await request(app, key, {
    method: 'POST',
    url: LIST,
    payload: { email: 'b@example.it', consentType: 'contract', lastName: 'Bianchi' },
  })
  t.equal(withConsent.json().consentType, 'contract')
  t.equal(withConsent.json().lastName, 'Bianchi')
})

t.test('conflict on an existing email, case-insensitively', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const first = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'ann@x.io', firstName: 'A' } })
  const patched = await request(app, key, {
    method: 'PATCH',
    url: `${LIST}/${first.json().id}`,
    payload: { emailStatus: 'bounced' },
  })
  t.equal(patched.statusCode, 200)

  const dup = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'Ann@X.io', firstName: 'B' } })
  t.equal(dup.statusCode, 409)
  t.same(dup.json().error.existing, { id: first.json().id, status: 'bounced' })
  t.equal(dup.json().error.code, 'conflict')
  const after = await request(app, key, { method: 'GET', url: `${LIST}/${first.json().id}` })
  t.same(after.json(), patched.json(), 'existing contact untouched')

  const other = await createTenantWithKey(app, { name: 'Other' })
  const elsewhere = await request(app, other.key, { method: 'POST', url: LIST, payload: { email: 'ann@x.io' } })
  t.equal(elsewhere.statusCode, 201, 'uniqueness is per tenant')
})

t.test('fifty concurrent creates of one email: one 201, 49 conflicts naming it', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      request(app, key, { method: 'POST', url: LIST, payload: { email: i % 2 ? 'race@x.io' : 'RACE@x.io' } }),
    ),
  )
  const created = results.filter((r) => r.statusCode === 201)
  const conflicts = results.filter((r) => r.statusCode === 409)
  t.equal(created.length, 1)
  t.equal(conflicts.length, 49)
  const id = created[0]?.json().id
  t.ok(
    conflicts.every((r) => r.json().error.existing.id === id),
    'every conflict names the winner',
  )
  t.equal(await app.db.prisma.contact.count(), 1)
})

t.test('unknown tags', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app, { tags: ['vip'] })
  await createTenantWithKey(app, { name: 'Other', tags: ['segreto'] })
  const res = await request(app, key, {
    method: 'POST',
    url: LIST,
    payload: { email: 'a@x.io', tags: ['vip', 'nuovo', 'segreto'] },
  })
  t.equal(res.statusCode, 400)
  t.equal(res.json().error.code, 'unknown_tag')
  t.match(res.json().error.message, /"nuovo"/)
  t.match(res.json().error.message, /"segreto"/, "another tenant's tag is unknown")
  t.notMatch(res.json().error.message, /"vip"/)
  t.equal(await app.db.prisma.contact.count(), 0, 'nothing created')
  t.equal(await app.db.prisma.tag.count(), 2, 'no tag created')

  // The request's own fault comes before the state it meets: with the email taken, unknown tags are still a 400.
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'b@x.io' } })
  const taken = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'b@x.io', tags: ['nuovo'] } })
  t.equal(taken.statusCode, 400, 'unknown tags before the conflict')
  t.equal(taken.json().error.code, 'unknown_tag')
  const known = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'b@x.io', tags: ['vip'] } })
  t.equal(known.statusCode, 409, 'known tags: the conflict')
})

t.test('tenant isolation: another tenant reads as absent, byte for byte', async (t) => {
  const { app } = await build(t)
  const a = await createTenantWithKey(app)
  const b = await createTenantWithKey(app, { name: 'B' })
  const created = await request(app, a.key, { method: 'POST', url: LIST, payload: { email: 'a@x.io' } })
  const id = created.json().id

  const absent = await request(app, b.key, { method: 'GET', url: `${LIST}/00000000-0000-4000-8000-000000000000` })
  const foreign = await request(app, b.key, { method: 'GET', url: `${LIST}/${id}` })
  const notUuid = await request(app, b.key, { method: 'GET', url: `${LIST}/not-a-uuid` })
  for (const res of [absent, foreign, notUuid]) {
    t.equal(res.statusCode, 404)
    t.equal(res.body, absent.body)
    t.equal(res.headers['content-type'], absent.headers['content-type'])
  }
  t.equal(absent.json().error.code, 'not_found')

  const patch = await request(app, b.key, { method: 'PATCH', url: `${LIST}/${id}`, payload: { stage: 'customer' } })
  t.equal(patch.statusCode, 404)
  t.equal(patch.body, absent.body)
  const patchBad = await request(app, b.key, { method: 'PATCH', url: `${LIST}/xyz`, payload: { stage: 'customer' } })
  t.equal(patchBad.body, absent.body)
  t.equal((await request(app, a.key, { method: 'GET', url: `${LIST}/${id}` })).json().stage, 'lead', 'unchanged')

  const listB = await request(app, b.key, { method: 'GET', url: LIST })
  t.same(listB.json(), { data: [], next: null })
})

t.test('patch', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = (
    await request(app, key, { method: 'POST', url: LIST, payload: { email: 'p@x.io', firstName: 'P', lastName: 'Q' } })
  ).json()
  const url = `${LIST}/${created.id}`

  const empty = await request(app, key, { method: 'PATCH', url, payload: {} })
  t.equal(empty.statusCode, 200)
  t.same(empty.json(), created, '{} changes nothing, not even updatedAt')

  await new Promise((resolve) => setTimeout(resolve, 5))
  const res = await request(app, key, {
    method: 'PATCH',
    url,
    payload: { lastName: null, stage: 'customer', emailStatus: 'unsubscribed', consentType: 'consent' },
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { firstName: 'P', lastName: null, stage: 'customer', emailStatus: 'unsubscribed' })
  t.equal(res.json().consentType, 'consent')
  t.ok(res.json().updatedAt > created.updatedAt, 'updatedAt moves')
  t.equal(res.json().createdAt, created.createdAt)

  for (const stage of ['lead', 'prospect', 'customer', 'ex_customer']) {
    t.equal((await request(app, key, { method: 'PATCH', url, payload: { stage } })).json().stage, stage)
  }
  for (const emailStatus of ['active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review']) {
    t.equal(
      (await request(app, key, { method: 'PATCH', url, payload: { emailStatus } })).json().emailStatus,
      emailStatus,
    )
  }
  const before = (await request(app, key, { method: 'GET', url })).json()

  const refused: [Record<string, unknown>, RegExp][] = [
    [{ stage: 'vip' }, /"stage".*lead, prospect, customer, ex_customer/],
    [{ emailStatus: 'gone' }, /"emailStatus"/],
    [{ email: 'new@x.io' }, /"email" non è ammesso/],
    [{ phone: '123' }, /"phone" non è ammesso/],
    [{ tags: [] }, /"tags" non è ammesso/],
    [{ archivedAt: null }, /"archivedAt" non è ammesso/],
    [{ id: created.id }, /"id" non è ammesso/],
    [{ favouriteColour: 'blu' }, /"favouriteColour" non è ammesso/],
    [{ firstName: 5 }, /"firstName".*testo/],
    [{ firstName: '' }, /"firstName"/],
    [{ firstName: 'x'.repeat(101) }, /"firstName".*100/],
    [{ stage: 'customer', lastName: 'ok', extra: true }, /"extra"/],
  ]
  for (const [payload, message] of refused) {
    const bad = await request(app, key, { method: 'PATCH', url, payload })
    t.equal(bad.statusCode, 400, JSON.stringify(payload))
    t.equal(bad.json().error.code, 'invalid_body')
    t.match(bad.json().error.message, message)
  }
  t.same((await request(app, key, { method: 'GET', url })).json(), before, 'refused patches changed nothing')
})

t.test('create validation', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const refused: [unknown, RegExp][] = [
    [{}, /"email" è obbligatorio/],
    [{ email: 'not-an-email' }, /"email".*email valido/],
    [{ email: `${'a'.repeat(250)}@x.io` }, /"email"/],
    [{ email: 'a@x.io', firstName: 5 }, /"firstName".*testo/],
    [{ email: 'a@x.io', firstName: 'a\u0000b' }, /"firstName".*nessun carattere di controllo/],
    [{ email: 'a@x.io', phone: 'call me' }, /"phone"/],
    [{ email: 'a@x.io', phone: '1'.repeat(33) }, /"phone"/],
    [{ email: 'a@x.io', consentType: 'c'.repeat(65) }, /"consentType"/],
    [{ email: 'a@x.io', tags: 'vip' }, /"tags".*lista/],
    [{ email: 'a@x.io', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, /"tags"/],
    [{ email: 'a@x.io', tags: [1] }, /"tags\[0\]"/],
    [{ email: 'a@x.io', emailStatus: 'active' }, /"emailStatus" non è ammesso/],
    [{ email: 'a@x.io', source: 'manual' }, /"source" non è ammesso/],
    [[], /corpo della richiesta/],
    ['"a@x.io"', /corpo della richiesta/],
  ]
  for (const [payload, message] of refused) {
    const res = await request(app, key, { method: 'POST', url: LIST, payload: payload as object })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().error.code, 'invalid_body')
    t.match(res.json().error.message, message)
  }
  t.equal(await app.db.prisma.contact.count(), 0)
})

t.test('list filters, archived contacts, query validation', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  const prisma = app.db.prisma
  const base = Date.parse('2026-01-01T00:00:00.000Z')
  await prisma.contact.createMany({
    data: Array.from({ length: 12 }, (_, i) => ({
      tenantId,
      email: `c${i}@x.io`,
      stage: (['lead', 'customer', 'prospect'] as const)[i % 3],
      emailStatus: (['active', 'bounced'] as const)[i % 2],
      archivedAt: i === 4 ? new Date() : null,
      createdAt: new Date(base + i * 1000),
    })),
  })

  const all = (await request(app, key, { method: 'GET', url: LIST })).json()
  t.equal(all.data.length, 11, 'archived left out by default')
  t.equal(all.next, null)
  t.same(
    all.data.map((c: { email: string }) => c.email),
    [11, 10, 9, 8, 7, 6, 5, 3, 2, 1, 0].map((i) => `c${i}@x.io`),
    'newest first',
  )
  const withArchived = (await request(app, key, { method: 'GET', url: `${LIST}?includeArchived=true` })).json()
  t.equal(withArchived.data.length, 12)
  const archivedId = withArchived.data.find((c: { email: string }) => c.email === 'c4@x.io').id
  t.equal(
    (await request(app, key, { method: 'GET', url: `${LIST}/${archivedId}` })).statusCode,
    200,
    'GET one sees archived',
  )

  const customers = (await request(app, key, { method: 'GET', url: `${LIST}?stage=customer` })).json()
  t.ok(customers.data.length > 0 && customers.data.every((c: { stage: string }) => c.stage === 'customer'))
  const both = (await request(app, key, { method: 'GET', url: `${LIST}?stage=lead&emailStatus=active` })).json()
  t.same(
    both.data.map((c: { email: string }) => c.email),
    ['c6@x.io', 'c0@x.io'],
  )

  const page = (await request(app, key, { method: 'GET', url: `${LIST}?limit=5` })).json()
  t.equal(page.data.length, 5)
  t.equal(page.next, page.data[4].createdAt)
  const exact = (await request(app, key, { method: 'GET', url: `${LIST}?limit=11` })).json()
  t.equal(exact.next, null, 'no trailing empty page when the page is exactly full')

  const refused: [string, RegExp][] = [
    ['limit=0', /"limit"/],
    ['limit=201', /"limit".*200/],
    ['limit=abc', /"limit".*intero/],
    ['limit=1.5', /"limit"/],
    ['cursor=yesterday', /"cursor".*ISO 8601/],
    ['stage=vip', /"stage"/],
    ['emailStatus=x', /"emailStatus"/],
    ['includeArchived=yes', /"includeArchived"/],
    ['colour=blu', /"colour" non è ammesso/],
    ['limit=1&limit=2', /"limit"/],
  ]
  for (const [query, message] of refused) {
    const res = await request(app, key, { method: 'GET', url: `${LIST}?${query}` })
    t.equal(res.statusCode, 400, query)
    t.equal(res.json().error.code, 'invalid_query', query)
    t.match(res.json().error.message, message, query)
  }
})
