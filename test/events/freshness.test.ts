// What a follower of the feed waits for is its own tenant's committed writes alone (decision 0009): a transaction
// left open, by another tenant or by its own, holds back nobody's committed changes; it takes its place in the
// feed when it commits, after every position already served. On PostgreSQL and Citus (the embedded database runs
// one transaction at a time: nothing can stay open beside a request).
import pg from 'pg'
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'
import { type FeedEvent, feed } from '../privacy/support.ts'

const LIST = '/api/v1/contacts'

t.test('an open transaction holds back no committed change, of its tenant or another', async (t) => {
  const { app, db } = await build(t, { RATE_LIMIT_MAX: '100000' })
  if (!db.url) {
    t.comment('the embedded database runs one transaction at a time')
    return
  }
  const a = await createTenantWithKey(app)
  const b = await createTenantWithKey(app, { name: 'B' })
  const now = async (key: string) =>
    (await request(app, key, { method: 'GET', url: '/api/v1/events?after=now' })).json().next as string
  const [fromA, fromB] = [await now(a.key), await now(b.key)]

  // Tenant A's transaction, by hand: it writes a contact (its event recorded by the trigger) and stays open.
  const open = new pg.Client({ connectionString: db.url })
  await open.connect()
  t.teardown(() => open.end())
  await open.query('BEGIN')
  await open.query("INSERT INTO contacts (id, tenant_id, email) VALUES (gen_random_uuid(), $1, 'aperta@example.it')", [
    a.tenantId,
  ])

  const emails = (events: FeedEvent[]) => events.map((event) => event.data.email)
  await request(app, b.key, { method: 'POST', url: LIST, payload: { email: 'b@example.it' } })
  t.same(emails((await feed(app, b.key, fromB)).data), ['b@example.it'], "B's change, read at once")
  await request(app, a.key, { method: 'POST', url: LIST, payload: { email: 'a@example.it' } })
  const served = await feed(app, a.key, fromA)
  t.same(emails(served.data), ['a@example.it'], "A's committed change, read at once beside A's open transaction")

  await open.query('COMMIT')
  t.same(
    emails((await feed(app, a.key, served.next)).data),
    ['aperta@example.it'],
    'the open one after it, once committed',
  )
  t.same(
    emails((await feed(app, a.key, fromA)).data),
    ['a@example.it', 'aperta@example.it'],
    'read again from the start: the same order',
  )
})
