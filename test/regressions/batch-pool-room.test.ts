// Regression: tenants importing at once took every pooled connection, and an idle tenant's reads failed with 503.
// Found by: a load review (issue #29, "One request must not stop every tenant").
// How it showed: four tenants importing at once (4 of the largest batches each, the default pool of 4) gave an idle
// tenant 44 503s in 1,167 GETs, and 65 GETs in 5 s with one taking 18.6 s: every batch that ran held a connection
// for its whole write, and a batch waiting for its tenant's turn with an Idempotency-Key held one too (the key's
// transaction began before the wait).
// Fix: at most BATCH_CONCURRENCY batches write at once, and on PostgreSQL at most DATABASE_POOL_SIZE - 1; the others,
// and a tenant's later batches, wait for their turn in memory, before the key's transaction begins
// (src/contacts/batch/admission.ts).
// Without the fix the idle tenant's reads below wait DATABASE_CONNECT_TIMEOUT_MS for a connection and get 503.
// The batches are held inside their write by a contact each of them names, locked here from another session: the
// longest a write can take, without depending on the machine's speed.
import pg from 'pg'
import t from 'tap'
import { citusNodes } from '../database.ts'
import { build, createTenantWithKey, request } from '../helper.ts'
import { until } from '../wait.ts'

const BATCH = '/api/v1/contacts/batch'
const LIST = '/api/v1/contacts'

type App = Awaited<ReturnType<typeof build>>['app']

/** The contact every batch below names, which the test holds locked meanwhile. */
const HELD = 'tenuto@example.it'

/** Holds each tenant's HELD contact locked in a transaction of another session, until `release`. */
async function holdContacts(url: string, tenantIds: string[]) {
  const session = new pg.Client({ connectionString: url })
  await session.connect()
  await session.query('BEGIN')
  for (const tenantId of tenantIds) {
    await session.query('SELECT id FROM contacts WHERE tenant_id = $1 AND email_key = $2 FOR UPDATE', [tenantId, HELD])
  }
  let released = false
  return async () => {
    if (released) return
    released = true
    await session.query('COMMIT')
    await session.end()
  }
}

/** Sessions of the app's database waiting for a lock: the batches blocked in their write. */
async function waitingForLocks(url: string): Promise<number> {
  const session = new pg.Client({ connectionString: url })
  await session.connect()
  try {
    // On Citus the batches wait on the node of their tenant's rows: citus_stat_activity sees every node.
    const activity = citusNodes().length > 0 ? 'citus_stat_activity' : 'pg_stat_activity'
    const { rows } = await session.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${activity} WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    )
    return rows[0]?.n ?? 0
  } finally {
    await session.end()
  }
}

/** An idle tenant's reads in 8 loops for `ms`: how many of each status, and the slowest. */
async function idleReads(app: App, key: string, ms: number) {
  const statuses = new Map<number, number>()
  let slowest = 0
  const end = Date.now() + ms
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < end) {
        const started = performance.now()
        const res = await request(app, key, { method: 'GET', url: `${LIST}?limit=50` })
        slowest = Math.max(slowest, performance.now() - started)
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      }
    }),
  )
  return { statuses: Object.fromEntries(statuses), slowest: Math.round(slowest) }
}

if (process.env.TEST_DATABASE_URL) {
  for (const concurrency of ['2', '8']) {
    t.test(`BATCH_CONCURRENCY=${concurrency}: an idle tenant reads while four tenants' writes hold on`, async (t) => {
      const { app, db } = await build(t, {
        RATE_LIMIT_MAX: '100000',
        DATABASE_POOL_SIZE: '4',
        DATABASE_CONNECT_TIMEOUT_MS: '3000',
        BATCH_CONCURRENCY: concurrency,
      })
      const url = db.url as string
      const importers = [
        await createTenantWithKey(app, { name: 'A' }),
        await createTenantWithKey(app, { name: 'B' }),
        await createTenantWithKey(app, { name: 'C' }),
        await createTenantWithKey(app, { name: 'D' }),
      ]
      const idle = await createTenantWithKey(app, { name: 'Tranquilla', role: 'viewer', scopes: ['contacts:read'] })
      await app.db.prisma.contact.createMany({
        data: Array.from({ length: 50 }, (_, i) => ({ tenantId: idle.tenantId, email: `quieto${i}@example.it` })),
      })
      for (const { tenantId } of importers) {
        await app.db.prisma.contact.createMany({ data: [{ tenantId, email: HELD }] })
      }
      const release = await holdContacts(
        url,
        importers.map(({ tenantId }) => tenantId),
      )
      // Registered after build's own teardowns, so run before them: a failure must not leave the app's batches
      // waiting for these locks while it closes.
      t.teardown(release)

      // The first tenant sends four batches at once, each with its Idempotency-Key; the others one each.
      const batch = (key: string, email: string, idempotencyKey?: string) =>
        request(app, key, {
          method: 'POST',
          url: BATCH,
          payload: { contacts: [{ email: HELD, firstName: email }, { email }] },
          headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
        })
      const [first, ...others] = importers as [(typeof importers)[0], ...typeof importers]
      const sent = [
        ...Array.from({ length: 4 }, (_, i) => batch(first.key, `a${i}@example.it`, `lotto-${i}`)),
        ...others.map(({ key }, i) => batch(key, `altro${i}@example.it`)),
      ]
      // A retry of the first while it waits: it waits behind it, and gets its answer.
      const retry = batch(first.key, 'a0@example.it', 'lotto-0')
      const writers = Math.min(Number(concurrency), 4 - 1)
      await until(
        async () => (await waitingForLocks(url)) >= writers,
        `${writers} batches are blocked in their write`,
        60_000,
      )
      // Time for any other batch to take a connection, as each did before the fix.
      await new Promise((resolve) => setTimeout(resolve, 500))
      t.equal(await waitingForLocks(url), writers, `${writers} batches write at once, the others wait in memory`)

      const reads = await idleReads(app, idle.key, 4000)
      // A read that waited 3 s for a connection would have been a 503.
      t.same(Object.keys(reads.statuses), ['200'], `the idle tenant's reads: ${JSON.stringify(reads)}`)

      await release()
      const answered = await Promise.all(sent)
      t.same(
        answered.map((res) => res.statusCode),
        Array(sent.length).fill(200),
        'every batch is written once the locks are gone',
      )
      const retried = await retry
      t.equal(retried.statusCode, 200)
      t.equal(retried.headers['idempotent-replayed'], 'true', 'the retry got the first answer')
      t.equal(
        await app.db.prisma.contact.count({ where: { tenantId: first.tenantId } }),
        1 + 4,
        'the held contact and four new',
      )
    })
  }
}
