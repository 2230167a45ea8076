// A Contact is declared once (src/contacts/fields.ts): adding a field is one line of CONTACT_FIELDS and its
// migration. This builds everything from a declaration with one field more and checks that the field reaches
// every schema and every statement it should, and none it should not; then checks that the real declaration's
// columns are those of the migrated database.

import { Type } from '@sinclair/typebox'
import t from 'tap'
import { batchStatements } from '../../src/contacts/batch/sql.ts'
import { CONTACT_FIELDS, type ContactStorage, describeContact, type FieldSpec } from '../../src/contacts/model.ts'
import { contactStatements } from '../../src/contacts/sql.ts'
import { build } from '../helper.ts'

const company = Type.String({ minLength: 1, maxLength: 80 })
const WITH_COMPANY = {
  ...CONTACT_FIELDS,
  companyName: {
    answer: Type.Union([Type.String(), Type.Null()]),
    create: { schema: company },
    update: { schema: company },
    example: 'Rossi S.r.l.',
  },
}

t.test('one more declared field reaches the schemas, their examples and every statement', async (t) => {
  const described = describeContact(WITH_COMPANY)
  t.ok('companyName' in described.ContactSchema.properties, 'in answers')
  t.ok('companyName' in described.ContactCreateSchema.properties, 'in POST bodies')
  t.notOk((described.ContactCreateSchema.required as string[]).includes('companyName'), 'optional in POST bodies')
  t.ok('companyName' in described.ContactUpdateSchema.properties, 'in PATCH bodies')
  t.equal(described.ContactSchema.examples[0].companyName, 'Rossi S.r.l.', 'in the Contact example')
  t.equal(described.ContactCreateSchema.examples[0].companyName, 'Rossi S.r.l.', 'in the POST example')

  const sql = contactStatements(described.storage)
  t.match(sql.GET_SQL, /c\.company_name AS "companyName"/, 'read by GET, as its snake_case column')
  t.match(sql.CREATE_SQL, /INSERT INTO contacts AS c \([^)]*company_name/, 'written by POST')
  const params = sql.createParams('tenant', { email: 'a@b.it', companyName: 'Acme' } as never, 'id', null)
  t.ok(params.includes('Acme'), 'POST passes its value')
  const update = sql.updateStatement('tenant', 'id', { companyName: 'Acme' } as never)
  t.match(update.sql, /SET company_name = \$3,/, 'written by PATCH')
  t.same(update.params, ['tenant', 'id', 'Acme'])

  t.ok('companyName' in described.BatchItemSchema.properties, 'in batch items')
  t.notOk((described.BatchItemSchema.required as string[]).includes('companyName'), 'optional in batch items')
  const batch = batchStatements(described.storage)
  t.match(batch.INSERT.sql, /INSERT INTO contacts AS c \([^)]*company_name/, 'created by a batch')
  t.match(batch.UPDATE.sql, /i\.item \? 'companyName' AS has_company_name/, 'whether a batch item gives it')
  t.match(
    batch.UPDATE.sql,
    /company_name = CASE WHEN x\.has_company_name THEN x\.given_company_name/,
    'set by a batch when given',
  )
  t.match(batch.READ.sql, /c\.company_name AS "companyName"/, 'read by a batch')
})

t.test('a field the API only reads stays out of the bodies and the writes', async (t) => {
  const described = describeContact({ ...CONTACT_FIELDS, score: { answer: Type.Integer(), example: 3 } })
  t.ok('score' in described.ContactSchema.properties)
  t.notOk('score' in described.ContactCreateSchema.properties)
  t.notOk('score' in described.ContactUpdateSchema.properties)
  const sql = contactStatements(described.storage)
  t.match(sql.GET_SQL, /c\.score AS "score"/)
  t.notMatch(sql.CREATE_SQL, /INSERT INTO contacts \([^)]*score/)
})

t.test('enumerations are cast to their type, named as the enumeration', async (t) => {
  const storage: ContactStorage = describeContact(CONTACT_FIELDS).storage
  t.equal(storage.update.emailStatus?.cast, '::email_status')
  t.equal(storage.update.stage?.cast, '::stage')
  t.equal(storage.update.firstName?.cast, '')
  const declared = Object.entries(CONTACT_FIELDS as Record<string, FieldSpec>).filter(
    ([, spec]) => spec.create !== undefined || spec.createdAs !== undefined,
  )
  t.same(
    storage.create.map(({ stored }) => stored.field),
    declared.map(([field]) => field),
    'a POST writes the fields a body may carry and those the server sets, each in its column',
  )
  t.equal(storage.create.find(({ stored }) => stored.field === 'firstName')?.stored.column, 'first_name')
})

t.test("every stored field of the declaration is a column of the migrated database's contacts", async (t) => {
  const { app } = await build(t)
  const rows = await app.db.query<{ column_name: string }>(
    'contact_columns',
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'contacts'",
    [],
  )
  const columns = new Set(rows.map((row) => row.column_name))
  for (const { field, stored } of describeContact(CONTACT_FIELDS).storage.answer) {
    if (stored) t.ok(columns.has(stored.column), `${field} is stored in contacts.${stored.column}`)
  }
})

t.test("the initial value a batch gives a new contact's PATCH-only fields is the column's default", async (t) => {
  const { app } = await build(t)
  const rows = await app.db.query<{ column_name: string; column_default: string | null }>(
    'contact_defaults',
    "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'contacts'",
    [],
  )
  const defaults = new Map(rows.map((row) => [row.column_name, row.column_default]))
  const initial = describeContact(CONTACT_FIELDS).storage.batch.filter(
    ({ field }) => (CONTACT_FIELDS as Record<string, FieldSpec>)[field]?.initial !== undefined,
  )
  t.same(
    initial.map(({ field }) => field),
    ['emailStatus', 'stage'],
  )
  for (const { stored, absent } of initial) {
    t.equal(defaults.get(stored.column), `'${absent}'${stored.cast}`, `${stored.column} defaults to ${absent}`)
  }
})
