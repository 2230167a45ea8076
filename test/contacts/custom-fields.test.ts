// A tenant's own fields (docs/api-fields.md): definitions, values on contacts through every write, their rules in
// Italian, what a change of a definition may not break, and a deleted field's values gone for readers at once.

import t from 'tap'
import { PRESENCE_BY_VALUES } from '../../src/contacts/custom-fields/search.ts'
import { REPLANNED } from '../../src/db/statement-name.ts'
import type { TestContext } from '../helper.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { anotherInstance } from '../privacy/support.ts'

const ADMIN = { role: 'admin', scopes: ['contacts:read', 'contacts:write', 'fields:manage'] } as const

async function setUp(t: TestContext, env: Record<string, string> = {}) {
  const { app } = await build(t, env)
  const { tenantId, key } = await createTenantWithKey(app, { role: ADMIN.role, scopes: [...ADMIN.scopes] })
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    request(app, key, { method, url: `/api/v1${url}`, ...(payload !== undefined && { payload: payload as object }) })
  const define = async (definition: Record<string, unknown>) => {
    const answer = await call('POST', '/fields', definition)
    if (answer.statusCode !== 201) throw new Error(`define ${JSON.stringify(definition)}: ${answer.body}`)
    return answer.json()
  }
  return { app, tenantId, key, call, define }
}

t.test('definitions: created, listed, read, refused when wrong, with their scope and role', async (t) => {
  const { app, tenantId, call, define } = await setUp(t)
  const created = await call('POST', '/fields', { name: 'livello', type: 'enum', label: 'Livello', options: ['oro'] })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, '/api/v1/fields/livello')
  t.match(created.json(), { name: 'livello', type: 'enum', label: 'Livello', options: ['oro'] })
  t.notOk('maxLength' in created.json())
  await define({ name: 'note', type: 'text', maxLength: 20 })

  const list = await call('GET', '/fields')
  t.same(
    list.json().data.map((field: { name: string }) => field.name),
    ['livello', 'note'],
  )
  t.equal((await call('GET', '/fields/note')).json().maxLength, 20)
  const missing = await call('GET', '/fields/assente')
  t.equal(missing.statusCode, 404)
  t.match(missing.json().error.message, /"assente" non esiste/)

  const refusals: [Record<string, unknown>, number, string, RegExp][] = [
    [{ name: 'livello', type: 'text' }, 409, 'field_exists', /già un campo "livello"/],
    [{ name: 'email', type: 'text' }, 400, 'invalid_body', /già un campo del contatto/],
    [{ name: 'firstname', type: 'text' }, 400, 'invalid_body', /già un campo del contatto/],
    [{ name: 'Maiuscolo', type: 'text' }, 400, 'invalid_body', /"name"/],
    [{ name: '1inizio', type: 'text' }, 400, 'invalid_body', /"name"/],
    [{ name: 'scelta', type: 'enum' }, 400, 'invalid_body', /vuole "options"/],
    [{ name: 'quanti', type: 'number', maxLength: 3 }, 400, 'invalid_body', /solo per text/],
    [{ name: 'quanti', type: 'number', options: ['a'] }, 400, 'invalid_body', /solo per enum/],
    [{ name: 'colore', type: 'colour' }, 400, 'invalid_body', /"type"/],
    [{ name: 'testo', type: 'text', maxLength: 1001 }, 400, 'invalid_body', /"maxLength"/],
    [{ name: 'constructor', type: 'text' }, 400, 'invalid_body', /nome riservato/],
  ]
  for (const [body, status, code, message] of refusals) {
    const answer = await call('POST', '/fields', body)
    t.equal(answer.statusCode, status, JSON.stringify(body))
    t.equal(answer.json().error.code, code, JSON.stringify(body))
    t.match(answer.json().error.message, message, JSON.stringify(body))
  }

  // Reads need contacts:read; changes an admin with fields:manage.
  const { key: editor } = await createTenantWithKey(app, {
    role: 'editor',
    scopes: ['contacts:read', 'contacts:write', 'fields:manage'],
  })
  t.equal((await request(app, editor, { method: 'GET', url: '/api/v1/fields' })).statusCode, 200)
  const byEditor = await request(app, editor, {
    method: 'POST',
    url: '/api/v1/fields',
    payload: { name: 'x', type: 'text' },
  })
  t.equal(byEditor.statusCode, 403)
  t.equal(byEditor.json().error.code, 'insufficient_role')
  const { key: noScope } = await createTenantWithKey(app, { role: 'admin', scopes: ['contacts:read'] })
  const withoutScope = await request(app, noScope, {
    method: 'POST',
    url: '/api/v1/fields',
    payload: { name: 'x', type: 'text' },
  })
  t.equal(withoutScope.statusCode, 403)
  t.equal(withoutScope.json().error.code, 'insufficient_scope')
  // Another tenant sees none of them.
  t.same((await request(app, editor, { method: 'GET', url: '/api/v1/fields' })).json().data, [])
  const [count] = await app.db.query<{ n: number }>(
    REPLANNED,
    'SELECT count(*)::int AS n FROM custom_fields WHERE tenant_id = $1',
    [tenantId],
  )
  t.equal(count?.n, 2)
})

t.test('values: every type through POST, PATCH and the batch, checked against the tenant’s fields', async (t) => {
  const { app, tenantId, key, call, define } = await setUp(t)
  await define({ name: 'note', type: 'text', maxLength: 5 })
  await define({ name: 'punti', type: 'number' })
  await define({ name: 'attivo', type: 'boolean' })
  await define({ name: 'compleanno', type: 'date' })
  await define({ name: 'visto', type: 'datetime' })
  await define({ name: 'livello', type: 'enum', options: ['bronzo', 'oro'] })
  await define({ name: 'interessi', type: 'multiEnum', options: ['vino', 'viaggi', 'libri'] })

  const values = {
    note: 'ciao',
    punti: 12.5,
    attivo: true,
    compleanno: '1990-05-17',
    visto: '2026-03-01T09:30:00.000Z',
    livello: 'oro',
    interessi: ['vino', 'libri'],
  }
  const created = await call('POST', '/contacts', { email: 'anna@example.it', fields: values })
  t.equal(created.statusCode, 201)
  t.same(created.json().fields, values)
  const id = created.json().id
  t.same((await call('GET', `/contacts/${id}`)).json().fields, values)
  const plain = await call('POST', '/contacts', { email: 'bruno@example.it' })
  t.same(plain.json().fields, {})

  const wrong: [Record<string, unknown>, string, RegExp][] = [
    [{ punti: '12' }, 'invalid_body', /"fields\.punti" non è valido: deve essere un numero/],
    [{ note: 'troppo lungo' }, 'invalid_body', /"fields\.note"/],
    [{ compleanno: '2026-02-30' }, 'invalid_body', /"fields\.compleanno"/],
    [{ compleanno: '17/05/1990' }, 'invalid_body', /"fields\.compleanno"/],
    [{ compleanno: '0000-01-01' }, 'invalid_body', /"fields\.compleanno"/],
    [{ punti: [1] }, 'invalid_body', /"fields\.punti" non è valido: deve essere un numero/],
    [{ attivo: null }, 'invalid_body', /"fields\.attivo" non è valido: deve essere true o false/],
    [{ visto: '2026-03-01T09:30:00Z' }, 'invalid_body', /"fields\.visto"/],
    [{ livello: 'platino' }, 'invalid_body', /"fields\.livello" non è valido: deve essere uno tra: bronzo, oro/],
    [{ interessi: ['vino', 'vino'] }, 'invalid_body', /"fields\.interessi"/],
    [{ interessi: 'vino' }, 'invalid_body', /"fields\.interessi"/],
    [{ attivo: 'sì' }, 'invalid_body', /"fields\.attivo"/],
    [{ ignoto: 1, altro: 2 }, 'unknown_field', /campi inesistenti: "ignoto", "altro"/],
  ]
  for (const [fields, code, message] of wrong) {
    const answer = await call('POST', '/contacts', { email: 'carla@example.it', fields })
    t.equal(answer.statusCode, 400, JSON.stringify(fields))
    t.equal(answer.json().error.code, code, JSON.stringify(fields))
    t.match(answer.json().error.message, message, JSON.stringify(fields))
  }
  t.equal((await call('GET', '/contacts?email=carla@example.it')).json().data.length, 0, 'nothing written')
  // A number JSON can write but a double cannot hold: refused, not stored as null.
  const huge = await request(app, key, {
    method: 'POST',
    url: '/api/v1/contacts',
    headers: { 'content-type': 'application/json' },
    payload: '{"email":"enorme@example.it","fields":{"punti":1e309}}',
  })
  t.equal(huge.statusCode, 400, huge.body)
  t.match(huge.json().error.message, /"fields\.punti"/)

  // PATCH merges by key; null removes; a PATCH that changes nothing writes nothing.
  const patched = await call('PATCH', `/contacts/${id}`, { fields: { punti: 13, note: null } })
  t.equal(patched.statusCode, 200)
  const { note: _note, ...rest } = values
  t.same(patched.json().fields, { ...rest, punti: 13 })
  t.equal(patched.headers.etag, '"v2"')
  const again = await call('PATCH', `/contacts/${id}`, { fields: { punti: 13 } })
  t.equal(again.headers.etag, '"v2"', 'no new version for the same value')
  const patchWrong = await call('PATCH', `/contacts/${id}`, { fields: { livello: 'platino' } })
  t.equal(patchWrong.statusCode, 400)
  const [events] = await app.db.query<{ n: number }>(
    REPLANNED,
    'SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND contact_id = $2',
    [tenantId, id],
  )
  t.equal(events?.n, 2, 'one event for the create, one for the PATCH')
  const feed = await call('GET', '/events?limit=10')
  const last = feed
    .json()
    .data.filter((event: { data: { id: string } }) => event.data.id === id)
    .at(-1)
  t.same(last.data.fields, { ...rest, punti: 13 }, 'the feed carries the fields')

  // The batch: an item with a wrong value fails alone; another merges into its contact.
  const batch = await call('POST', '/contacts/batch', {
    contacts: [
      { email: 'anna@example.it', fields: { livello: 'bronzo', interessi: null } },
      { email: 'dario@example.it', fields: { punti: 'molti' } },
      { email: 'elena@example.it', fields: { attivo: false, ignoto: 1 } },
      { email: 'franco@example.it', fields: { attivo: false, note: null } },
    ],
  })
  t.equal(batch.statusCode, 200)
  const results = batch.json().results
  t.equal(results[0].status, 200)
  t.same(results[0].contact.fields, {
    punti: 13,
    attivo: true,
    compleanno: '1990-05-17',
    visto: values.visto,
    livello: 'bronzo',
  })
  t.equal(results[1].status, 400)
  t.match(results[1].error.message, /"contacts\[1\]\.fields\.punti"/)
  t.equal(results[2].status, 400)
  t.equal(results[2].error.code, 'unknown_field')
  t.match(results[2].error.message, /"contacts\[2\]\.fields" nomina un campo inesistente: "ignoto"/)
  t.equal(results[3].status, 201)
  t.same(results[3].contact.fields, { attivo: false })

  // null removes a value of every type, an enum's included (an outside tester found it refused as not an option).
  const removed = await call('PATCH', `/contacts/${id}`, { fields: { livello: null, attivo: null } })
  t.equal(removed.statusCode, 200, removed.body)
  t.notOk('livello' in removed.json().fields, 'the enum value removed')
  t.notOk('attivo' in removed.json().fields, 'the boolean value removed')
  const enums = await call('POST', '/contacts/batch', {
    contacts: [
      { email: 'anna@example.it', fields: { livello: null } },
      { email: 'gino@example.it', fields: { livello: null, punti: 1 } },
    ],
  })
  t.same(
    enums.json().results.map((r: { status: number; contact: { fields: object } }) => [r.status, r.contact.fields]),
    [
      [200, { punti: 13, compleanno: '1990-05-17', visto: values.visto }],
      [201, { punti: 1 }],
    ],
    'a batch removes an enum value, and leaves a new contact’s null out',
  )
})

t.test('a change of a definition that stored values would break is refused with their count', async (t) => {
  const { call, define } = await setUp(t)
  await define({ name: 'livello', type: 'enum', options: ['bronzo', 'argento', 'oro'] })
  await define({ name: 'note', type: 'text' })
  await define({ name: 'vuoto', type: 'text' })
  for (const [email, livello] of [
    ['a@example.it', 'oro'],
    ['b@example.it', 'oro'],
    ['c@example.it', 'bronzo'],
  ]) {
    t.equal((await call('POST', '/contacts', { email, fields: { livello, note: 'abcdef' } })).statusCode, 201)
  }
  const takeGold = await call('PATCH', '/fields/livello', { options: ['bronzo', 'argento'] })
  t.equal(takeGold.statusCode, 409)
  t.equal(takeGold.json().error.code, 'field_in_use')
  t.match(takeGold.json().error.message, /"livello" non ammetterebbe i valori che 2 contatti hanno/)
  const takeSilver = await call('PATCH', '/fields/livello', { options: ['bronzo', 'oro', 'platino'], label: 'Livello' })
  t.equal(takeSilver.statusCode, 200, 'no contact holds argento')
  t.same(takeSilver.json().options, ['bronzo', 'oro', 'platino'])
  t.equal(takeSilver.json().label, 'Livello')
  t.equal((await call('POST', '/contacts', { email: 'd@example.it', fields: { livello: 'platino' } })).statusCode, 201)
  t.equal((await call('PATCH', '/fields/note', { maxLength: 3 })).json().error.code, 'field_in_use')
  t.equal((await call('PATCH', '/fields/note', { maxLength: 6 })).statusCode, 200)
  t.equal((await call('POST', '/contacts', { email: 'e@example.it', fields: { note: 'abcdefg' } })).statusCode, 400)
  t.equal((await call('PATCH', '/fields/note', { type: 'number' })).json().error.code, 'field_in_use')
  const unchanged = await call('PATCH', '/fields/vuoto', {})
  t.equal(unchanged.json().updatedAt, (await call('GET', '/fields/vuoto')).json().updatedAt, 'PATCH {} changes nothing')
  const retyped = await call('PATCH', '/fields/vuoto', { type: 'number' })
  t.equal(retyped.statusCode, 200, 'no contact holds a value')
  t.equal((await call('POST', '/contacts', { email: 'f@example.it', fields: { vuoto: 3 } })).statusCode, 201)
  t.equal((await call('PATCH', '/fields/assente', { label: 'x' })).statusCode, 404)
})

t.test(
  'a deleted field leaves every answer at once, its values reclaimed without a change of the contacts',
  async (t) => {
    const { app, tenantId, call, define } = await setUp(t)
    await define({ name: 'livello', type: 'text' })
    await define({ name: 'punti', type: 'number' })
    const created = await call('POST', '/contacts', {
      email: 'a@example.it',
      fields: { livello: 'UNICO-7f3a', punti: 1 },
    })
    const id = created.json().id
    const deleted = await call('DELETE', '/fields/livello')
    t.equal(deleted.statusCode, 204)
    t.same((await call('GET', `/contacts/${id}`)).json().fields, { punti: 1 }, 'gone for readers at once')
    t.same((await call('GET', '/contacts')).json().data[0].fields, { punti: 1 })
    t.equal((await call('DELETE', '/fields/livello')).statusCode, 404)
    t.equal((await call('GET', '/fields/livello')).statusCode, 404)
    const reuse = await call('POST', '/fields', { name: 'livello', type: 'number' })
    t.equal(reuse.statusCode, 409, 'the name comes back once its values are reclaimed')
    t.match(reuse.json().error.message, /ancora in rimozione/)
    const write = await call('PATCH', `/contacts/${id}`, { fields: { livello: 'x' } })
    t.equal(write.statusCode, 400)
    t.equal(write.json().error.code, 'unknown_field')

    // The reclaim runs in the background: wait for the stored value to go.
    const stored = async () =>
      (
        await app.db.query<{ fields: Record<string, unknown>; version: number }>(
          REPLANNED,
          'SELECT fields, version FROM contacts WHERE tenant_id = $1 AND id = $2',
          [tenantId, id],
        )
      )[0]
    for (let i = 0; i < 100 && 'livello' in ((await stored())?.fields ?? {}); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.same(await stored(), { fields: { punti: 1 }, version: 1 }, 'reclaimed, same version')
    const [events] = await app.db.query<{ n: number }>(
      REPLANNED,
      'SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND contact_id = $2',
      [tenantId, id],
    )
    t.equal(events?.n, 1, 'no event for the reclaim')
    // The feed's events no longer hold the value either: a field defined again under the name starts empty.
    const eventsHolding = async () =>
      (
        await app.db.query<{ n: number }>(
          REPLANNED,
          `SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND contact -> 'fields' ? 'livello'`,
          [tenantId],
        )
      )[0]?.n
    for (let i = 0; i < 100 && (await eventsHolding()) !== 0; i++) await new Promise((r) => setTimeout(r, 50))
    t.equal(await eventsHolding(), 0, 'the events’ copies reclaimed too')
    const feed = await call('GET', '/events?limit=100')
    t.notMatch(feed.body, 'UNICO-7f3a', 'no event of the feed holds the deleted value')
    // A PATCH of another field after the deletion changes the contact as usual.
    t.equal((await call('PATCH', `/contacts/${id}`, { fields: { punti: 2 } })).headers.etag, '"v2"')
  },
)

t.test('SQL by hand cannot store a value of a field the tenant does not define', async (t) => {
  const { app, tenantId } = await setUp(t)
  await t.rejects(
    app.db.query(
      REPLANNED,
      `INSERT INTO contacts (id, tenant_id, email, fields) VALUES (gen_random_uuid(), $1, 'x@example.it', '{"nessuno": 1}')`,
      [tenantId],
    ),
    { code: 'RB002' },
  )
  await t.rejects(
    app.db
      .query(REPLANNED, `UPDATE contacts SET fields = '[]' WHERE tenant_id = $1`, [tenantId])
      .then(() =>
        app.db.query(
          REPLANNED,
          `INSERT INTO contacts (id, tenant_id, email, fields) VALUES (gen_random_uuid(), $1, 'y@example.it', '[1]')`,
          [tenantId],
        ),
      ),
    /non-object|contacts_fields_object/,
  )
})

t.test('search by the tenant’s own fields: each type’s operators, against the values written', async (t) => {
  // Each filter's pages one contact at a time: more requests than a minute's default allowance.
  const { call, define } = await setUp(t, { RATE_LIMIT_MAX: '1000' })
  await define({ name: 'livello', type: 'enum', options: ['bronzo', 'argento', 'oro'] })
  await define({ name: 'punti', type: 'number' })
  await define({ name: 'nato', type: 'date' })
  await define({ name: 'citta', type: 'text' })
  await define({ name: 'attivo', type: 'boolean' })
  await define({ name: 'interessi', type: 'multiEnum', options: ['vino', 'viaggi', 'libri'] })
  // More options than an enum's presence is written with (PRESENCE_BY_VALUES): its name is tested instead.
  const regioni = Array.from({ length: PRESENCE_BY_VALUES + 2 }, (_, i) => `regione ${i}`)
  await define({ name: 'regione', type: 'enum', options: regioni })
  const people = [
    {
      email: 'p0@example.it',
      fields: {
        livello: 'oro',
        punti: 10,
        nato: '1980-01-02',
        citta: 'Forlì',
        attivo: true,
        interessi: ['vino'],
        regione: regioni.at(-1),
      },
    },
    {
      email: 'p1@example.it',
      fields: { livello: 'argento', punti: 2.5, nato: '1990-06-30', citta: 'Milano', interessi: ['vino', 'libri'] },
    },
    { email: 'p2@example.it', fields: { livello: 'oro', punti: -3, citta: 'forli', attivo: false } },
    { email: 'p3@example.it', fields: {} },
    { email: 'p4@example.it', fields: { interessi: [] } },
  ]
  for (const person of people) t.equal((await call('POST', '/contacts', person)).statusCode, 201)
  // The expected set of each filter, computed here from the values written, not by the same SQL.
  const cases: [Record<string, unknown>, (f: Record<string, unknown>) => boolean][] = [
    [{ field: 'fields.livello', op: 'eq', value: 'oro' }, (f) => f.livello === 'oro'],
    [{ field: 'fields.livello', op: 'neq', value: 'oro' }, (f) => f.livello !== 'oro'],
    [
      { field: 'fields.livello', op: 'in', value: ['argento', 'bronzo'] },
      (f) => ['argento', 'bronzo'].includes(f.livello as string),
    ],
    [{ field: 'fields.punti', op: 'gt', value: 2.5 }, (f) => typeof f.punti === 'number' && f.punti > 2.5],
    [{ field: 'fields.punti', op: 'lte', value: 2.5 }, (f) => typeof f.punti === 'number' && f.punti <= 2.5],
    [
      { field: 'fields.punti', op: 'between', value: [-3, 3] },
      (f) => typeof f.punti === 'number' && f.punti >= -3 && f.punti <= 3,
    ],
    [
      { field: 'fields.nato', op: 'lt', value: '1985-01-01' },
      (f) => typeof f.nato === 'string' && f.nato < '1985-01-01',
    ],
    [{ field: 'fields.nato', op: 'exists' }, (f) => 'nato' in f],
    [{ field: 'fields.nato', op: 'notExists' }, (f) => !('nato' in f)],
    // Presence of a boolean and an enum is written as their values ORed (the index holds values, not names); of a
    // multiEnum, as the name's, since [] is a value too.
    [{ field: 'fields.attivo', op: 'exists' }, (f) => 'attivo' in f],
    [{ field: 'fields.attivo', op: 'notExists' }, (f) => !('attivo' in f)],
    [{ field: 'fields.livello', op: 'exists' }, (f) => 'livello' in f],
    [{ field: 'fields.livello', op: 'notExists' }, (f) => !('livello' in f)],
    [{ field: 'fields.interessi', op: 'exists' }, (f) => 'interessi' in f],
    [{ field: 'fields.interessi', op: 'notExists' }, (f) => !('interessi' in f)],
    [{ field: 'fields.regione', op: 'exists' }, (f) => 'regione' in f],
    [{ field: 'fields.regione', op: 'notExists' }, (f) => !('regione' in f)],
    [
      { field: 'fields.citta', op: 'prefix', value: 'FORLI' },
      (f) => typeof f.citta === 'string' && f.citta.toLowerCase().startsWith('forl'),
    ],
    [{ field: 'fields.citta', op: 'eq', value: 'Milano' }, (f) => f.citta === 'Milano'],
    [{ field: 'fields.attivo', op: 'eq', value: false }, (f) => f.attivo === false],
    [
      { field: 'fields.interessi', op: 'hasAll', value: ['vino', 'libri'] },
      (f) => Array.isArray(f.interessi) && f.interessi.includes('libri') && f.interessi.includes('vino'),
    ],
    [
      { field: 'fields.interessi', op: 'hasAny', value: ['libri', 'viaggi'] },
      (f) => Array.isArray(f.interessi) && f.interessi.some((v) => v === 'libri' || v === 'viaggi'),
    ],
    [
      { field: 'fields.interessi', op: 'hasNone', value: ['vino'] },
      (f) => !(Array.isArray(f.interessi) && f.interessi.includes('vino')),
    ],
  ]
  for (const [filter, expected] of cases) {
    const answer = await call('POST', '/contacts/search', {
      filterGroups: [{ filters: [filter] }],
      limit: 1,
      count: true,
    })
    t.equal(answer.statusCode, 200, JSON.stringify(filter))
    const want = people.filter((person) => expected(person.fields as Record<string, unknown>)).map((p) => p.email)
    t.equal(answer.json().total, want.length, JSON.stringify(filter))
    // Walked one contact a page: every match once.
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await call('POST', '/contacts/search', {
        filterGroups: [{ filters: [filter] }],
        limit: 1,
        ...(cursor && { cursor }),
      })
      t.equal(page.statusCode, 200, JSON.stringify(filter))
      seen.push(...page.json().data.map((c: { email: string }) => c.email))
      cursor = page.json().next ?? undefined
    } while (cursor)
    t.same(seen.sort(), want.sort(), JSON.stringify(filter))
  }
  // Values with quotes, backslashes and other scripts are compared as written (the statement holds them as constants).
  const odd = 'L’Aquila \'centro\' \\ "vecchio" 東京 😀'
  t.equal((await call('POST', '/contacts', { email: 'odd@example.it', fields: { citta: odd } })).statusCode, 201)
  for (const op of ['eq', 'in'] as const) {
    const found = await call('POST', '/contacts/search', {
      filterGroups: [{ filters: [{ field: 'fields.citta', op, value: op === 'eq' ? odd : [odd, 'Milano'] }] }],
      count: true,
    })
    t.equal(found.json().total, op === 'eq' ? 1 : 2, `${op} of an odd text`)
  }
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ field: 'fields.ignoto', op: 'eq', value: 1 }, /il campo proprio "ignoto" non esiste/],
    [{ field: 'fields.livello', op: 'gt', value: 'oro' }, /l’operatore "gt" non si applica a "fields.livello"/],
    [{ field: 'fields.livello', op: 'eq', value: 'platino' }, /"value" non è valido per un campo enum/],
    [{ field: 'fields.punti', op: 'eq', value: '3' }, /"value" non è valido per un campo number/],
    [{ field: 'fields.punti', op: 'exists', value: 1 }, /con "exists" non va indicato "value"/],
    [
      { field: 'fields.citta', op: 'prefix', value: '%' },
      /"value" non è valido per un campo text: deve contenere almeno una lettera/,
    ],
    [{ field: 'fields.nato', op: 'lt', value: '2026-02-30' }, /"value" non è valido per un campo date: deve essere/],
    [{ field: 'fields.Maiuscolo', op: 'eq', value: 1 }, /"fields\.Maiuscolo" non è il nome di un campo proprio/],
  ]
  for (const [filter, message] of refused) {
    const answer = await call('POST', '/contacts/search', {
      filterGroups: [{ filters: [{ field: 'stage', op: 'eq', value: 'lead' }, filter] }],
    })
    t.equal(answer.statusCode, 400, JSON.stringify(filter))
    t.match(answer.json().error.message, /filterGroups\[0\]\.filters\[1\]/, JSON.stringify(filter))
    t.match(answer.json().error.message, message, JSON.stringify(filter))
  }
})

t.test('the tenant’s own document types its fields; the public one stays generic', async (t) => {
  const { app, call, define } = await setUp(t)
  await define({ name: 'livello', type: 'enum', options: ['bronzo', 'oro'], label: 'Livello' })
  await define({ name: 'punti', type: 'number' })
  const own = await call('GET', '/openapi.json')
  t.equal(own.statusCode, 200)
  t.match(own.headers['content-type'], /^application\/json/)
  const schemas = own.json().components.schemas
  t.same(schemas.Contact.properties.fields.properties, {
    livello: { type: 'string', enum: ['bronzo', 'oro'], title: 'Livello' },
    punti: { type: 'number', minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE },
  })
  t.equal(schemas.Contact.properties.fields.additionalProperties, false)
  t.same(schemas.ContactUpdate.properties.fields.properties.punti, {
    anyOf: [{ type: 'number', minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE }, { type: 'null' }],
  })
  const filters = schemas.SearchFilter.anyOf.filter((f: { properties: { field: { enum?: string[] } } }) =>
    f.properties.field.enum?.[0]?.startsWith('fields.'),
  )
  t.same(
    filters.map((f: { properties: { field: { enum: string[] }; op: { enum: string[] } } }) => [
      f.properties.field.enum[0],
      f.properties.op.enum,
    ]),
    [
      ['fields.livello', ['eq', 'neq']],
      ['fields.livello', ['in', 'notIn']],
      ['fields.livello', ['exists', 'notExists']],
      ['fields.punti', ['eq', 'neq', 'lt', 'lte', 'gt', 'gte']],
      ['fields.punti', ['in', 'notIn']],
      ['fields.punti', ['between']],
      ['fields.punti', ['exists', 'notExists']],
    ],
  )
  // A new field is in the document at once; the public document keeps the generic shape.
  await define({ name: 'nato', type: 'date' })
  t.ok((await call('GET', '/openapi.json')).json().components.schemas.Contact.properties.fields.properties.nato)
  const generic = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.notOk(generic.components.schemas.Contact.properties.fields.properties)
  t.equal(generic.components.schemas.Contact.properties.fields.additionalProperties.anyOf.length, 4)
})

t.test('a change of the definitions reaches another instance within a second', async (t) => {
  const { app, key, call, define } = await setUp(t)
  const other = await anotherInstance(t, app)
  const post = (email: string, fields: Record<string, unknown>) =>
    request(other, key, { method: 'POST', url: '/api/v1/contacts', payload: { email, fields } })
  await define({ name: 'livello', type: 'enum', options: ['bronzo', 'argento', 'oro'] })
  // The other instance compiles the tenant's validators and keeps them.
  t.equal((await post('a@example.it', { livello: 'argento' })).statusCode, 201)
  const [held] = await app.db.query<{ id: string }>(
    REPLANNED,
    `SELECT id FROM contacts WHERE tenant_id = (SELECT tenant_id FROM contacts WHERE email = 'a@example.it')`,
    [],
  )
  t.ok(held)
  t.equal((await call('PATCH', `/contacts/${held?.id}`, { fields: { livello: 'oro' } })).statusCode, 200)
  // Through this instance, "argento" goes: the other hears it and refuses it at once (its cache lasts 30 s).
  t.equal((await call('PATCH', '/fields/livello', { options: ['bronzo', 'oro'] })).statusCode, 200)
  let refused = false
  const deadline = Date.now() + 1000
  while (!refused && Date.now() < deadline) {
    const answer = await post(`b${Date.now()}@example.it`, { livello: 'argento' })
    refused = answer.statusCode === 400
    if (!refused) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(refused, 'the other instance refuses the option taken away within a second')
})
