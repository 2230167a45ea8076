// A flood of random keys from one address: once the address has used up its budget of refused requests, its
// requests are refused before any database work and before anything is cached. Measured on the database itself
// when it is one PostgreSQL server (pg_stat_database: on a Citus coordinator, Citus's own background work commits
// transactions too), and by counting the statements the app sends on every database.
import pg from 'pg'
import t from 'tap'
import { hashApiKey } from '../../src/auth/api-key.ts'
import { citusNodes } from '../database.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const LIST = '/api/v1/contacts'
const randomKey = (i: number) => `svc_${i.toString(16).padStart(48, 'c')}`

async function committedTransactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('SELECT pg_stat_force_next_flush()')
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
    )
    return Number(rows[0]?.n)
  } finally {
    await client.end()
  }
}

t.test('an exhausted address is refused before any database work', async (t) => {
  const { app, db } = await build(t, { RATE_LIMIT_MAX: '5' })
  const tenant = await createTenantWithKey(app)
  const known = await createTenantWithKey(app, { name: 'Known' })
  t.equal((await request(app, known.key, { method: 'GET', url: LIST })).statusCode, 200, 'a key resolved earlier')

  for (let i = 0; i < 5; i++) {
    t.equal((await request(app, randomKey(i), { method: 'GET', url: LIST })).statusCode, 401, `guess ${i}`)
  }
  const statements: string[] = []
  const query = app.db.query.bind(app.db)
  app.db.query = (name, sql, params) => {
    statements.push(name)
    return query(name, sql, params)
  }
  const server = citusNodes().length === 0 ? db.url : undefined
  const before = server ? await committedTransactions(server) : 0
  const statuses = new Set<number>()
  for (let i = 100; i < 400; i++) {
    const res = await request(app, randomKey(i), { method: 'GET', url: LIST })
    statuses.add(res.statusCode)
    if (i === 100) {
      t.equal(res.json().error.code, 'rate_limit_exceeded')
      t.ok(Number(res.headers['retry-after']) > 0, 'with Retry-After')
      t.equal(res.headers['x-ratelimit-remaining'], '0')
    }
  }
  t.same([...statuses], [429], 'all 300 refused with 429')
  t.same(statements, [], 'no statement reached the database')
  if (server) {
    const after = await committedTransactions(server)
    t.ok(after - before <= 5, `PostgreSQL committed ${after - before} transactions during the flood (near zero)`)
  }
  t.equal(app.apiKeys.cached(hashApiKey(randomKey(150))), undefined, 'no refused key was cached')

  const served = await request(app, known.key, { method: 'GET', url: LIST })
  t.equal(served.statusCode, 200, 'a key this instance already knows is still served from that address')
  const unknownValid = await request(app, tenant.key, { method: 'GET', url: LIST })
  t.equal(unknownValid.statusCode, 429, 'a key not yet known waits for the window, like any other guess')
  const elsewhere = await request(app, tenant.key, { method: 'GET', url: LIST, remoteAddress: '10.9.8.7' })
  t.equal(elsewhere.statusCode, 200, 'from another address it is served')
})

t.test('concurrent guesses get no more key lookups than the budget', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '5' })
  const lookups: string[] = []
  const query = app.db.query.bind(app.db)
  app.db.query = (name, sql, params) => {
    if (name === 'api_keys_resolve') lookups.push(String(params[0]))
    return query(name, sql, params)
  }
  const statuses = await Promise.all(
    Array.from({ length: 300 }, (_, i) => request(app, randomKey(1000 + i), { method: 'GET', url: LIST })),
  ).then((answers) => answers.map((res) => res.statusCode))
  t.equal(lookups.length, 5, `${lookups.length} lookups for 300 concurrent guesses with a budget of 5`)
  t.equal(statuses.filter((status) => status === 401).length, 5, 'five refused as unknown')
  t.equal(statuses.filter((status) => status === 429).length, 295, 'the rest refused by the limit')
})

t.test('a valid key looked up from an address does not spend its budget', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '2' })
  const tenants = await Promise.all(['A', 'B', 'C'].map((name) => createTenantWithKey(app, { name })))
  for (const tenant of tenants) {
    t.equal((await request(app, tenant.key, { method: 'GET', url: LIST })).statusCode, 200, 'a first lookup')
  }
  t.equal((await request(app, randomKey(1), { method: 'GET', url: LIST })).statusCode, 401, 'the budget is whole')
  t.equal((await request(app, randomKey(2), { method: 'GET', url: LIST })).statusCode, 401)
  t.equal((await request(app, randomKey(3), { method: 'GET', url: LIST })).statusCode, 429)
})
