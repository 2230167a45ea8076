// A definition that changes while writes of its values are on their way (docs/api-fields.md, "Values on contacts"),
// and a batch item whose values, merged into its contact's or as PostgreSQL writes them out, would pass the limit.

import t from 'tap'
import { CHANGE_LOCK_SQL } from '../../src/contacts/custom-fields/sql.ts'
import { REPLANNED } from '../../src/db/statement-name.ts'
import type { TestContext } from '../helper.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const ADMIN = { role: 'admin', scopes: ['contacts:read', 'contacts:write', 'fields:manage'] } as const

async function setUp(t: TestContext) {
  // The rules' comparison sends more requests than a minute's default allows.
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000' })
  const { tenantId, key } = await createTenantWithKey(app, { role: ADMIN.role, scopes: [...ADMIN.scopes] })
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    request(app, key, { method, url: `/api/v1${url}`, ...(payload !== undefined && { payload: payload as object }) })
  const define = async (definition: Record<string, unknown>) => {
    const answer = await call('POST', '/fields', definition)
    if (answer.statusCode !== 201) throw new Error(`define ${JSON.stringify(definition)}: ${answer.body}`)
  }
  /** A contact's stored values, as the table holds them. */
  const stored = async (id: string) =>
    (
      await app.db.query<{ fields: Record<string, unknown> }>(
        REPLANNED,
        'SELECT fields FROM contacts WHERE tenant_id = $1 AND id = $2',
        [tenantId, id],
      )
    )[0]?.fields
  /** Changes a definition behind the service's back: its instances keep the one they know. */
  const redefineInSql = (name: string, type: string, options: string[] | null = null) =>
    app.db.query(
      REPLANNED,
      'UPDATE custom_fields SET type = $3, options = $4::text[], updated_at = now() WHERE tenant_id = $1 AND name = $2',
      [tenantId, name, type, options],
    )
  /** Defines a field behind the service's back: no announcement of it can arrive after the service reads it. */
  const defineInSql = (name: string, type: string, options: string[] | null = null) =>
    app.db.query(
      REPLANNED,
      `INSERT INTO custom_fields (tenant_id, name, type, options, created_at, updated_at)
        VALUES ($1, $2, $3, $4::text[], now() - interval '2 minutes', now() - interval '2 minutes')`,
      [tenantId, name, type, options],
    )
  return { app, tenantId, call, define, stored, redefineInSql, defineInSql }
}

/** Values of each type, right and wrong, for the definitions below. */
const CASES: [string, Record<string, unknown>, unknown[]][] = [
  [
    'testo',
    { type: 'text', maxLength: 5 },
    [
      'abc',
      'abcde',
      'abcdef',
      'Nicolò',
      'àèìòù',
      '😀😀😀😀😀',
      '😀😀😀😀😀😀',
      'e\u0301e',
      'a\u0001',
      'a\nb',
      'a\u200Bb',
      'a\u2028b',
      'a\u007F',
      'a\u0085',
      'a\u00ADb',
      '',
      3,
      true,
      ['a'],
      { a: 1 },
    ],
  ],
  ['numero', { type: 'number' }, [0, -0, -1.5, 1e300, -1e-300, '3', true, [1], null]],
  ['flag', { type: 'boolean' }, [true, false, 'true', 0]],
  [
    'giorno',
    { type: 'date' },
    [
      '2026-02-28',
      '2024-02-29',
      '2026-02-29',
      '2026-02-30',
      '0001-01-01',
      '0000-01-01',
      '2026-13-01',
      '2026-1-1',
      20260101,
    ],
  ],
  [
    'istante',
    { type: 'datetime' },
    [
      '2026-03-01T09:30:00.000Z',
      '2026-03-01T23:59:59.999Z',
      '2026-03-01T24:00:00.000Z',
      '2026-12-31T23:59:60.000Z',
      '0000-03-01T12:00:00.000Z',
      '2026-02-30T09:30:00.000Z',
      '2026-03-01T09:30:00Z',
      '2026-03-01T09:30:00.000+01:00',
      '2026-03-01 09:30:00.000Z',
      'ieri',
    ],
  ],
  ['livello', { type: 'enum', options: ['oro', 'argento'] }, ['oro', 'argento', 'Oro', 'rame', ['oro'], 1]],
  [
    'interessi',
    { type: 'multiEnum', options: ['sci', 'vela', 'golf'] },
    [['sci'], ['sci', 'vela', 'golf'], [], ['sci', 'sci'], ['tennis'], 'sci', [1], [['sci']]],
  ],
]

t.test('the database checks a value against the same rules as the service', async (t) => {
  const { app, call, define } = await setUp(t)
  let n = 0
  for (const [name, definition, values] of CASES) {
    await define({ name, ...definition })
    for (const value of values) {
      const answer = await call('POST', '/contacts', { email: `c${n++}@example.it`, fields: { [name]: value } })
      const [row] = await app.db.query<{ fits: boolean }>(
        REPLANNED,
        'SELECT custom_field_fits($1, $2::text[], $3, $4::jsonb) AS fits',
        [definition.type, definition.options ?? null, definition.maxLength ?? null, JSON.stringify(value)],
      )
      // Named in ASCII: a line separator in an assertion's name would break the TAP stream.
      const shown = JSON.stringify(value).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)?.toString(16)}}`)
      t.equal(row?.fits, answer.statusCode === 201, `${name} ${shown}: service ${answer.statusCode}`)
    }
  }
  // JSON's 1e309, which the service reads as Infinity and refuses, is a number to PostgreSQL.
  const [huge] = await app.db.query<{ fits: boolean }>(
    REPLANNED,
    `SELECT custom_field_fits('number', NULL, NULL, '1e309') AS fits`,
    [],
  )
  t.equal(huge?.fits, false, '1e309')
})

t.test('a value checked against a definition changed since is refused by the database', async (t) => {
  const { call, stored, redefineInSql, defineInSql } = await setUp(t)
  await defineInSql('punti', 'text')
  await defineInSql('livello', 'enum', ['oro', 'argento'])
  const id = (await call('POST', '/contacts', { email: 'a@example.it', fields: { livello: 'oro' } })).json().id
  // The service has read the definitions; they change where it does not hear of it.
  await redefineInSql('punti', 'number')
  await redefineInSql('livello', 'enum', ['oro'])
  const patch = await call('PATCH', `/contacts/${id}`, { fields: { punti: 'dieci' } })
  t.equal(patch.statusCode, 400)
  t.equal(patch.json().error.code, 'invalid_body')
  t.match(patch.json().error.message, /la definizione di "punti" è cambiata mentre il contatto veniva scritto/)
  t.same(await stored(id), { livello: 'oro' }, 'nothing written')
  const created = await call('POST', '/contacts', { email: 'b@example.it', fields: { livello: 'argento' } })
  t.equal(created.statusCode, 400)
  t.match(created.json().error.message, /"livello"/)
  const batch = await call('POST', '/contacts/batch', {
    contacts: [
      { email: 'c@example.it', fields: { punti: 'venti' } },
      { email: 'd@example.it', fields: { livello: 'oro' } },
    ],
  })
  t.equal(batch.statusCode, 400, 'a batch whose write meets such a value is refused whole')
  t.match(batch.json().error.message, /"punti"/)
  t.equal((await call('GET', '/contacts?limit=10')).json().data.length, 1, 'and writes nothing')
  // A value the changed definition takes, and values of definitions not changed, are written as before.
  t.equal((await call('PATCH', `/contacts/${id}`, { fields: { livello: 'oro', punti: null } })).statusCode, 200)
})

t.test('a definition change and a write of a value it refuses take turns', async (t) => {
  const { app, tenantId, call, define, stored } = await setUp(t)
  if (app.db.kind === 'pglite') {
    // The embedded database runs one transaction at a time: the two cannot overlap.
    t.pass('one transaction at a time')
    return
  }
  await define({ name: 'punti', type: 'text' })
  const id = (await call('POST', '/contacts', { email: 'a@example.it' })).json().id
  const settled = (promise: Promise<unknown>) => {
    let done = false
    void promise.finally(() => {
      done = true
    })
    return () => done
  }
  const pause = () => new Promise((resolve) => setTimeout(resolve, 300))

  // The change first: the write waits for it, then finds its value outside the changed definition.
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let changing = () => {}
  const changed = new Promise<void>((resolve) => {
    changing = resolve
  })
  const change = app.db.transaction(async (query) => {
    await query(REPLANNED, CHANGE_LOCK_SQL, [tenantId, 'punti'])
    await query(REPLANNED, `UPDATE custom_fields SET type = 'number', updated_at = now() WHERE tenant_id = $1`, [
      tenantId,
    ])
    changing()
    await held
  })
  await changed
  const write = call('PATCH', `/contacts/${id}`, { fields: { punti: 'dieci' } })
  const written = settled(write)
  await pause()
  t.notOk(written(), 'the write waits for the change')
  release()
  await change
  const answer = await write
  t.equal(answer.statusCode, 400)
  t.match(answer.json().error.message, /"punti"/)
  t.same(await stored(id), {})

  // The write first: the change waits for it, then counts its value.
  await app.db.query(REPLANNED, `UPDATE custom_fields SET type = 'text' WHERE tenant_id = $1`, [tenantId])
  let commit = () => {}
  const open = new Promise<void>((resolve) => {
    commit = resolve
  })
  let writingStarted = () => {}
  const wrote = new Promise<void>((resolve) => {
    writingStarted = resolve
  })
  const writing = app.db.transaction(async (query) => {
    await query(REPLANNED, `UPDATE contacts SET fields = '{"punti": "dieci"}' WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ])
    writingStarted()
    await open
  })
  await wrote
  const retype = call('PATCH', '/fields/punti', { type: 'number' })
  const retyped = settled(retype)
  await pause()
  t.notOk(retyped(), 'the change waits for the write')
  commit()
  await writing
  const refused = await retype
  t.equal(refused.statusCode, 409)
  t.equal(refused.json().error.code, 'field_in_use')

  // SQL by hand in REPEATABLE READ, whose snapshot is older than a change: it fails, to be run again.
  await app.db.query(REPLANNED, `UPDATE contacts SET fields = '{}' WHERE tenant_id = $1`, [tenantId])
  const stale = app.db.transaction(async (query) => {
    await query(REPLANNED, 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ', [])
    await query(REPLANNED, 'SELECT count(*) FROM custom_fields WHERE tenant_id = $1', [tenantId])
    t.equal((await call('PATCH', '/fields/punti', { type: 'number' })).statusCode, 200)
    await query(REPLANNED, `UPDATE contacts SET fields = '{"punti": "dieci"}' WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ])
  })
  await t.rejects(stale, { code: '40001' })
  t.same(await stored(id), {})
})

t.test('a batch item whose values merged into its contact’s pass the limit fails alone', async (t) => {
  const { call, define, stored } = await setUp(t)
  const names = Array.from({ length: 9 }, (_, i) => `nota${i + 1}`)
  for (const name of names) await define({ name, type: 'text' })
  const long = (name: string) => name.repeat(190)
  const eight = Object.fromEntries(names.slice(0, 8).map((name) => [name, long(name)]))
  const id = (await call('POST', '/contacts', { email: 'a@example.it', fields: eight })).json().id
  const batch = await call('POST', '/contacts/batch', {
    contacts: [
      { email: 'a@example.it', fields: { nota9: long('nota9') } },
      { email: 'b@example.it', fields: { nota9: 'breve' } },
    ],
  })
  t.equal(batch.statusCode, 200)
  const [tooLarge, created] = batch.json().results
  t.equal(tooLarge.status, 400)
  t.equal(tooLarge.error.code, 'invalid_body')
  t.match(tooLarge.error.message, /"contacts\[0\]\.fields".*occuperebbero \d+ byte, al massimo 8192/)
  t.equal(created.status, 201)
  t.same(await stored(id), eight, 'the contact as it was')
  // A new contact's values as PostgreSQL writes them out (a space after each colon and comma) may pass the limit
  // where the JSON sent does not: refused alone too.
  const padded: Record<string, string> = Object.fromEntries(names.slice(0, 8).map((name) => [name, long(name)]))
  padded.nota9 = ''
  padded.nota9 = 'x'.repeat(8192 - Buffer.byteLength(JSON.stringify(padded)))
  t.equal(Buffer.byteLength(JSON.stringify(padded)), 8192)
  const spaced = await call('POST', '/contacts/batch', {
    contacts: [
      { email: 'c@example.it', fields: padded },
      { email: 'd@example.it', fields: { nota1: 'breve' } },
    ],
  })
  t.equal(spaced.statusCode, 200)
  t.match(spaced.json().results[0], { status: 400, error: { message: /"contacts\[0\]\.fields".*8209 byte/ } })
  t.equal(spaced.json().results[1].status, 201)
  // Removing values to make room goes through.
  const room = await call('POST', '/contacts/batch', {
    contacts: [{ email: 'a@example.it', fields: { nota1: null, nota9: long('nota9') } }],
  })
  t.equal(room.json().results[0].status, 200)
  t.notOk('nota1' in ((await stored(id)) ?? {}))
})
