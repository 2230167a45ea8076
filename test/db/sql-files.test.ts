// The committed .sql files (scripts/sql-files.ts) are the SQL the code sends and the functions the migrations
// leave: written again here and compared; and a session of requests sends no statement that they do not hold.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { asListed, FUNCTIONS_FILE, functionsText, statementTexts } from '../../scripts/sql-files.ts'
import { buildApp } from '../../src/app.ts'
import type { Database, Query } from '../../src/db/database.ts'
import { createTestDatabase } from '../database.ts'
import { createTenantWithKey, request, testConfig } from '../helper.ts'

const STALE = 'is current (if not: npm run sql:write, then commit it)'

t.test('each statements file holds what the code builds', async (t) => {
  for (const [path, text] of statementTexts()) t.equal(readFileSync(path, 'utf8'), text, `${path} ${STALE}`)
})

t.test('prisma/functions.sql holds the functions and triggers the migrations leave', async (t) => {
  t.equal(readFileSync(FUNCTIONS_FILE, 'utf8'), await functionsText(), `${FUNCTIONS_FILE} ${STALE}`)
})

/** `database`, with every statement sent through it (requests, transactions, background work) added to `sent`. */
function recording(database: Database, sent: Set<string>): Database {
  const record =
    (query: Query): Query =>
    <Row>(name: string, sql: string, params: unknown[]) => {
      sent.add(sql)
      return query<Row>(name, sql, params)
    }
  const wrap = (target: Pick<Database, 'query' | 'transaction'>): Pick<Database, 'query' | 'transaction'> => ({
    query: record((name, sql, params) => target.query(name, sql, params)),
    transaction: (work) => target.transaction((query) => work(record(query))),
  })
  return Object.assign(Object.create(database) as Database, wrap(database), { background: wrap(database.background) })
}

t.test('the statements of a session of requests are all in the files', async (t) => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const sent = new Set<string>()
  const app = await buildApp(testConfig(), { database: recording(db.database, sent) })
  t.teardown(() => app.close())
  await app.ready()
  const { key } = await createTenantWithKey(app, {
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write', 'contacts:erase'],
    tags: ['vip'],
  })
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers = {}) => {
    const res = await request(app, key, { method, url: `/api/v1${url}`, payload, headers })
    t.ok(res.statusCode < 300, `${method} ${url} → ${res.statusCode}`)
    return res
  }
  const created = (
    await send(
      'POST',
      '/contacts',
      { email: 'anna@example.com', firstName: 'Anna', tags: ['vip'] },
      {
        'idempotency-key': 'k1',
      },
    )
  ).json<{ id: string }>()
  const read = await send('GET', `/contacts/${created.id}`)
  await send('PATCH', `/contacts/${created.id}`, { stage: 'customer' }, { 'if-match': read.headers.etag as string })
  await send('PATCH', `/contacts/${created.id}`, { firstName: 'Annalisa' })
  // An update and 50 creates: two pages of the default 50.
  const others = Array.from({ length: 50 }, (_, i) => ({ email: `c${i}@example.com`, lastName: 'Rossi' }))
  await send('POST', '/contacts/batch', { contacts: [{ email: 'anna@example.com', tags: ['vip'] }, ...others] })
  const first = (await send('GET', '/contacts')).json<{ next: string }>()
  await send('GET', `/contacts?cursor=${encodeURIComponent(first.next)}`)
  await send('GET', '/contacts?q=rossi')
  await send('GET', '/events')
  await send('GET', `/contacts/${created.id}/export`)
  await send('DELETE', `/contacts/${created.id}`)
  t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200)

  const listed = [...statementTexts().values()].join('\n')
  const missing = [...sent].filter((sql) => !listed.includes(asListed(sql)))
  t.same(missing, [], 'every statement sent is in a statements.sql file')
  t.ok(sent.size >= 15, `the session sent ${sent.size} statements`)
})
