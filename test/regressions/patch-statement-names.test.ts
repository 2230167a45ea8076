// Regression: a PATCH of many fields answered 500 on PostgreSQL (42P05 "prepared statement … already exists").
// Found by: Schemathesis against openapi.json (issue #22).
// How it showed: statements were named from their fields (`contacts_update_<fields>[_if]`); PostgreSQL cuts names
// at 63 bytes, so a PATCH of all five fields and the same PATCH with If-Match got one name for two texts.
// Fix: every built statement is named from a hash of its own text (src/db/statement-name.ts).
import t from 'tap'
import { type ContactListQuery, listFilters } from '../../src/contacts/search/model.ts'
import { pageStatement, rowsFor } from '../../src/contacts/search/sql.ts'
import { statements } from '../../src/contacts/sql.ts'
import { MAX_NAME_BYTES, REPLANNED } from '../../src/db/statement-name.ts'

const { updateStatement } = statements

import { type ContactUpdate, ContactUpdateSchema } from '../../src/contacts/model.ts'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, defineExampleFields, request } from '../helper.ts'

/** A value for every field a PATCH may carry: the document's example of a PATCH body. */
const PATCH = ContactUpdateSchema.examples[0] as Required<ContactUpdate>

/** Every non-empty subset of the fields a PATCH may carry. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.flatMap((item, i) => [[item], ...subsets(items.slice(i + 1)).map((rest) => [item, ...rest])])
}

t.test('every statement shape has a name of its own, within PostgreSQL’s 63 bytes, or none', async (t) => {
  const byName = new Map<string, string>()
  const record = (name: string, sql: string) => {
    // A lookup by email is sent unnamed, planned with its values each time (REPLANNED): nothing to share.
    if (name === REPLANNED) return
    t.ok(Buffer.byteLength(name) <= MAX_NAME_BYTES, `${name} fits`)
    const earlier = byName.get(name)
    if (earlier !== undefined && earlier !== sql) t.fail(`${name} names two different statements`)
    byName.set(name, sql)
  }
  const fields = Object.keys(PATCH) as (keyof ContactUpdate)[]
  for (const subset of subsets(fields)) {
    const patch = Object.fromEntries(subset.map((field) => [field, PATCH[field]]))
    for (const versions of [undefined, [1]]) {
      const statement = updateStatement('t', 'c', patch, versions)
      record(statement.name, statement.sql)
    }
  }
  const listStatement = (query: ContactListQuery) =>
    pageStatement(
      { groups: [listFilters(query)], includeArchived: query.includeArchived, sort: '-createdAt' },
      rowsFor(query.limit),
      query.cursor === undefined ? undefined : { created: query.cursor },
    )
  for (const limit of [1, 7, 50, 200]) {
    for (const cursor of [undefined, '2026-01-01T00:00:00.000Z']) {
      for (const includeArchived of [false, true]) {
        const query = { limit, cursor, includeArchived, emailStatus: 'active', stage: 'lead' } as const
        const statement = listStatement(query)
        record(statement.name, statement.sql)
        t.equal(listStatement({ ...query, email: 'a@b.it' }).name, REPLANNED, 'by email: planned each time')
      }
    }
  }
  t.equal(byName.size, subsets(fields).length * 2 + 4 * 2 * 2, 'as many names as shapes')
})

t.test('the longest PATCH, then the same with If-Match, on one connection', async (t) => {
  // One connection: both statements are prepared on it (on PostgreSQL; PGlite names nothing).
  const { app } = await build(t, { DATABASE_POOL_SIZE: '1' })
  const { key, tenantId } = await createTenantWithKey(app)
  await defineExampleFields(app, tenantId)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'lunga@example.it' } })
  const url = `${LIST}/${created.json().id}`
  const first = await request(app, key, { method: 'PATCH', url, payload: PATCH })
  t.equal(first.statusCode, 200, first.body)
  const second = await request(app, key, {
    method: 'PATCH',
    url,
    headers: { 'if-match': String(first.headers.etag) },
    payload: { ...PATCH, stage: PATCH.stage === 'prospect' ? 'lead' : 'prospect' },
  })
  t.equal(second.statusCode, 200, second.body)
  t.not(second.json().stage, PATCH.stage)
})
