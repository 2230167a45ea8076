// What the hardening audit found about input (docs/reliability-findings.md, "The hardening audit"): bodies must be
// UTF-8 JSON, text fields refuse blank values and invisible characters, limit takes plain digits only, and a cursor
// keeps its sub-millisecond meaning. Every refusal is the Italian envelope and changes nothing.
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'

/** JSON with every non-ASCII character escaped: U+2028 in a test name would break TAP's lines. */
const shown = (value: unknown) =>
  JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

t.test('bodies are JSON in UTF-8', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  const post = (contentType: string, payload: Buffer) =>
    request(app, key, { method: 'POST', url: LIST, headers: { 'content-type': contentType }, payload })
  const json = (text: string) => Buffer.from(text, 'utf8')

  for (const charset of ['iso-8859-1', 'utf-16', 'windows-1252', '"latin1"']) {
    const res = await post(`application/json; charset=${charset}`, json('{"email":"a@x.io"}'))
    t.equal(res.statusCode, 415, `charset=${charset}`)
    t.equal(res.json().error.code, 'unsupported_media_type')
    t.match(res.json().error.message, /UTF-8/)
  }
  for (const [i, charset] of ['utf-8', 'UTF-8', 'utf8', '"utf-8"'].entries()) {
    const res = await post(`application/json; charset=${charset}`, json(`{"email":"utf${i}@x.io"}`))
    t.equal(res.statusCode, 201, `charset=${charset} is accepted`)
  }
  // "Zoë" in Latin-1: the byte E9 alone is not UTF-8.
  const latin1 = Buffer.concat([json('{"email":"zoe@x.io","firstName":"Zo'), Buffer.from([0xeb]), json('"}')])
  const invalid = await post('application/json', latin1)
  t.equal(invalid.statusCode, 400)
  t.equal(invalid.json().error.code, 'invalid_body')
  t.match(invalid.json().error.message, /UTF-8/)
  for (const encoding of ['gzip', 'br', 'deflate']) {
    const compressed = await request(app, key, {
      method: 'POST',
      url: LIST,
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      payload: json('{"email":"enc@x.io"}'),
    })
    t.equal(compressed.statusCode, 415, `Content-Encoding: ${encoding}`)
    t.equal(compressed.json().error.code, 'unsupported_media_type')
  }
  const overlong = await post(
    'application/json',
    Buffer.concat([json('{"email":"'), Buffer.from([0xc0, 0xaf]), json('@x.io"}')]),
  )
  t.equal(overlong.statusCode, 400, 'an overlong encoding is not UTF-8 either')

  const stored = await app.db.prisma.contact.findMany({ where: { tenantId }, select: { email: true } })
  t.equal(stored.length, 4, 'only the four UTF-8 bodies were stored')
  t.notOk(
    stored.some((c) => c.email?.includes('\uFFFD')),
    'no replacement character stored',
  )
})

t.test('text fields refuse blank values and invisible characters, naming the field', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'base@x.io' } })
  const id: string = created.json().id
  const refused: [string, Record<string, unknown>][] = [
    ['firstName', { firstName: '   ' }],
    ['lastName', { lastName: '\u00a0\u2003' }],
    ['consentType', { consentType: ' \t'.slice(0, 1) }],
    ['firstName', { firstName: 'Anna\u202e' }],
    ['lastName', { lastName: 'Ros\u200bsi' }],
    ['firstName', { firstName: '\ufeffAnna' }],
    ['consentType', { consentType: 'con\u2060sent' }],
    ['firstName', { firstName: 'Anna\u2028Maria' }],
    ['lastName', { lastName: 'Rossi\u2029' }],
    ['firstName', { firstName: 'soft\u00adhyphen' }],
  ]
  for (const [field, fields] of refused) {
    for (const [method, url, payload] of [
      ['POST', LIST, { email: 'new@x.io', ...fields }],
      ['PATCH', `${LIST}/${id}`, fields],
    ] as const) {
      const res = await request(app, key, { method, url, payload })
      t.equal(res.statusCode, 400, `${method} ${shown(fields)}`)
      t.equal(res.json().error.code, 'invalid_body')
      t.match(res.json().error.message, `"${field}"`, 'names the field')
    }
  }
  for (const phone of ['12', '+', '(--)', '1 2', '+1 (2)']) {
    const res = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'p@x.io', phone } })
    t.equal(res.statusCode, 400, `phone ${phone}`)
    t.match(res.json().error.message, /"phone"/)
  }
  const local65 = `${'a'.repeat(65)}@x.io`
  const label64 = `a@${'b'.repeat(64)}.io`
  for (const email of [local65, label64]) {
    const res = await request(app, key, { method: 'POST', url: LIST, payload: { email } })
    t.equal(res.statusCode, 400, `email ${email.length} characters`)
    t.match(res.json().error.message, /"email"/)
  }
  t.equal((await app.db.prisma.contact.findMany({ where: { tenantId } })).length, 1, 'nothing refused was stored')

  for (const payload of [
    { email: `${'a'.repeat(64)}@${'b'.repeat(63)}.io`, phone: '1 2 3', firstName: ' Anna ', consentType: 'consenso' },
    { email: 'emoji@x.io', firstName: 'Zoë 😀', lastName: "D'Àngelo" },
  ]) {
    const res = await request(app, key, { method: 'POST', url: LIST, payload })
    t.equal(res.statusCode, 201, `accepted: ${shown(payload)}`)
    t.equal(res.json().firstName, payload.firstName, 'stored as sent')
  }
})

t.test('limit is plain decimal digits', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  for (const limit of ['0x10', '1e2', '+5', '5.0', ' 5', '5 ', '', '٥', '0b1', '1_0']) {
    const res = await request(app, key, { method: 'GET', url: `${LIST}?limit=${encodeURIComponent(limit)}` })
    t.equal(res.statusCode, 400, `limit=${JSON.stringify(limit)}`)
    t.equal(res.json().error.code, 'invalid_query')
    t.match(res.json().error.message, /"limit"/)
  }
  for (const limit of ['5', '05', '200']) {
    const res = await request(app, key, { method: 'GET', url: `${LIST}?limit=${limit}` })
    t.equal(res.statusCode, 200, `limit=${limit}`)
  }
})

t.test('a cursor finer than a millisecond keeps its exact meaning', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  await app.db.prisma.contact.createMany({
    data: [
      { tenantId, email: 'older@x.io', createdAt: new Date('2026-03-01T09:30:00.123Z') },
      { tenantId, email: 'newer@x.io', createdAt: new Date('2026-03-01T09:30:00.124Z') },
    ],
  })
  const page = async (cursor: string) =>
    (await request(app, key, { method: 'GET', url: `${LIST}?cursor=${encodeURIComponent(cursor)}` }))
      .json()
      .data.map((c: { email: string }) => c.email)
  t.same(await page('2026-03-01T09:30:00.123500Z'), ['older@x.io'], '.1235 is after .123 and before .124')
  t.same(await page('2026-03-01T09:30:00.124000001Z'), ['newer@x.io', 'older@x.io'])
  t.same(await page('2026-03-01T09:30:00.123Z'), [], 'strictly older')
  t.same(await page('2026-03-01T10:30:00.1235+01:00'), ['older@x.io'], 'offsets too')
})
