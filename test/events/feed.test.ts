// The event feed: one event per change of a contact, whoever makes it, in the change's transaction, with the
// contact as GET returned it; followed by `next`, every committed event exactly once, a contact's events in order.
import t from 'tap'
import { archiveContact } from '../../src/admin/contacts.ts'
import { PURGE_SQL } from '../../src/events/sql.ts'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const FEED = '/api/v1/events'

interface Page {
  data: { id: string; type: string; occurredAt: string; data: { id: string; stage: string; updatedAt: string } }[]
  next: string
  hasMore: boolean
}

t.test('each change is an event with the contact as GET returns it; next, hasMore, now, type', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key, tenantId } = await createTenantWithKey(app, { tags: ['vip'] })
  const feed = async (query = '') => {
    const res = await request(app, key, { method: 'GET', url: `${FEED}${query}` })
    t.equal(res.statusCode, 200, res.body.slice(0, 300))
    return res.json() as Page
  }
  t.same(await feed(), { data: [], next: '0', hasMore: false }, 'an empty feed')
  t.same(await feed('?after=now'), { data: [], next: '0', hasMore: false })

  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'a@b.it', tags: ['vip'] } })
  const url = `${LIST}/${created.json().id}`
  const patched = await request(app, key, { method: 'PATCH', url, payload: { stage: 'customer' } })
  const unchanged = await request(app, key, { method: 'PATCH', url, payload: { stage: 'customer' } })
  t.equal(unchanged.headers.etag, patched.headers.etag, 'a PATCH that changes nothing keeps the ETag')
  t.equal(unchanged.json().updatedAt, patched.json().updatedAt, 'and updatedAt')
  await request(app, key, { method: 'POST', url: LIST, payload: { email: 'A@b.it' } })
  await archiveContact(app.db.prisma, tenantId, created.json().id)
  const archived = await request(app, key, { method: 'GET', url })

  const all = await feed()
  t.same(
    all.data.map((event) => event.type),
    ['contact.created', 'contact.updated', 'contact.updated'],
    'created, patched, archived by the CLI; nothing for the unchanged PATCH or the refused POST',
  )
  t.same(all.data[0]?.data, created.json(), 'the created event carries the POST answer')
  t.same(all.data[1]?.data, patched.json(), 'the PATCH event carries the PATCH answer')
  t.same(all.data[2]?.data, archived.json(), 'the CLI archive event carries the contact as GET returns it')
  t.equal(all.hasMore, false)
  const end = all.next
  t.equal(new Set(all.data.map((event) => event.id)).size, 3, 'events have ids of their own')

  const first = await feed('?limit=1')
  t.equal(first.data.length, 1)
  t.equal(first.hasMore, true)
  const rest = await feed(`?after=${first.next}&limit=5`)
  t.same(rest.data, all.data.slice(1), 'following next continues where the page ended')
  t.same((await feed(`?after=${end}`)).data, [], 'nothing new')
  t.equal((await feed(`?after=${end}`)).next, end, 'next is the position sent when nothing is new')
  t.equal((await feed('?after=now')).next, end, 'now is the current end')
  const created1 = await feed('?type=contact.created')
  t.same(
    created1.data.map((event) => event.type),
    ['contact.created'],
  )
  t.equal(created1.next, end, 'a filtered page that ends moves past the events it left out')
})

t.test('bad and foreign positions; positions past the retention are gone', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', EVENTS_RETENTION_DAYS: '1' })
  const mine = await createTenantWithKey(app)
  const theirs = await createTenantWithKey(app, { name: 'Altra' })
  for (let i = 0; i < 3; i++) {
    await request(app, mine.key, { method: 'POST', url: LIST, payload: { email: `m${i}@b.it` } })
  }
  const get = (key: string, query: string) => request(app, key, { method: 'GET', url: `${FEED}${query}` })
  // The last two: past the largest transaction id a position can hold (found by an outsider: 500 from the database).
  const pastBigint = ['92233720368547758080000000000', '999999999999999999999999999999']
  for (const after of ['-1', '01', 'abc', '1e3', '', '99999999999999999999', 'NOW', ...pastBigint]) {
    const res = await get(mine.key, `?after=${after}`)
    t.equal(res.statusCode, 400, `after=${after}`)
    t.equal(res.json().error.code, 'invalid_query')
  }
  t.equal((await get(mine.key, '?limit=0')).statusCode, 400)
  t.equal((await get(mine.key, '?type=contact.deleted')).statusCode, 400)
  // Positions after each of the three events.
  const after: string[] = []
  for (let position = '0'; after.length < 3; ) {
    position = (await get(mine.key, `?after=${position}&limit=1`)).json().next
    after.push(position)
  }
  const foreign = await get(theirs.key, `?after=${after[1]}`)
  t.equal(foreign.statusCode, 400, "another tenant's position means nothing here")
  t.same((await get(theirs.key, '')).json().data, [], 'tenants never see each other’s events')

  await app.db.query(
    'age',
    `UPDATE events SET occurred_at = now() - interval '2 days'
      WHERE tenant_id = $1 AND (SELECT k.seq FROM event_commits k WHERE k.tenant_id = $1 AND k.txn = events.txn)
        ::numeric * 10000000000 + n <= $2::numeric`,
    [mine.tenantId, after[1]],
  )
  t.equal(await app.events.purge(), 2, 'two events past the retention are purged')
  const expired = await get(mine.key, `?after=${after[0]}`)
  t.equal(expired.statusCode, 410)
  t.equal(expired.json().error.code, 'cursor_expired')
  t.match(expired.json().error.message, /1 giorni/)
  const still = await get(mine.key, `?after=${after[1]}`)
  t.equal(still.statusCode, 200, 'a position at the purged end still reads on')
  t.equal(still.json().data.length, 1)
  t.equal((await get(mine.key, '')).json().data.length, 1, 'without after: from the oldest kept')
})

// Found by an outsider on PostgreSQL: every event of two tenants older than a few minutes was purged, with 30 days
// of retention. The purge read where to stop, then deleted everything before it, or everything when it had read
// no recent event (as for a tenant whose first events commit in between): the deletion itself now spares every
// event within the retention, whatever was read before.
t.test('a purge that read no position to stop at still deletes no event within the retention', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  for (let i = 0; i < 3; i++) await request(app, key, { method: 'POST', url: LIST, payload: { email: `p${i}@b.it` } })
  await app.db.query(
    'age_one',
    `UPDATE events SET occurred_at = now() - interval '40 days'
      WHERE tenant_id = $1 AND id = (SELECT id FROM events WHERE tenant_id = $1 ORDER BY occurred_at, n LIMIT 1)`,
    [tenantId],
  )
  await app.events.sequence(tenantId)
  const [purged] = await app.db.query<{ deleted: number }>('purge_unbounded', PURGE_SQL, [
    tenantId,
    null,
    null,
    100,
    30,
  ])
  t.equal(purged?.deleted, 1, 'only the event past the retention')
  t.equal((await request(app, key, { method: 'GET', url: FEED })).json().data.length, 2, 'the recent two are kept')
})

t.test('eight writers committing at once: a follower sees every change exactly once, in order', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', DATABASE_POOL_SIZE: '10' })
  const { key, tenantId } = await createTenantWithKey(app)
  const ids: string[] = []
  for (let i = 0; i < 8; i++) {
    ids.push((await request(app, key, { method: 'POST', url: LIST, payload: { email: `w${i}@b.it` } })).json().id)
  }
  const start = (await request(app, key, { method: 'GET', url: `${FEED}?after=now` })).json().next as string
  const stages = ['prospect', 'customer', 'ex_customer', 'lead']
  let committed = 0
  let writing = true
  // Each writer changes its own contact in transactions that wait a random while before committing, so that they
  // start and commit interleaved; every fifth rolls back and must leave no event.
  const writer = async (id: string, w: number) => {
    for (let round = 0; round < 12; round++) {
      const stage = stages[(round + w) % stages.length]
      const rollback = (round + w) % 5 === 0
      await app.db
        .transaction(async (query) => {
          await query(
            'w',
            'UPDATE contacts SET stage = $3::stage, updated_at = now() WHERE tenant_id = $1 AND id = $2',
            [tenantId, id, stage],
          )
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 15))
          if (rollback) throw new Error('rolled back on purpose')
        })
        .then(
          () => committed++,
          () => {},
        )
    }
  }
  const seen: Page['data'] = []
  let position = start
  const follow = async () => {
    while (writing || seen.length < committed) {
      const res = await request(app, key, { method: 'GET', url: `${FEED}?after=${position}&limit=7` })
      const page = res.json() as Page
      seen.push(...page.data)
      position = page.next
      if (!page.hasMore) await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  const following = follow()
  await Promise.all(ids.map(writer))
  writing = false
  await following
  t.equal(seen.length, committed, `${committed} committed changes, as many events seen`)
  t.equal(new Set(seen.map((event) => event.id)).size, seen.length, 'none twice')
  const [row] = await app.db.query<{ n: string }>('n', 'SELECT count(*)::text AS n FROM events WHERE tenant_id = $1', [
    tenantId,
  ])
  t.equal(Number(row?.n), 8 + committed, 'the rolled-back transactions recorded nothing')
  for (const id of ids) {
    const mineSeen = seen.filter((event) => event.data.id === id)
    const times = mineSeen.map((event) => event.data.updatedAt)
    t.same(times, [...times].sort(), `contact ${id}: its events in the order of its changes`)
  }
})
