// A contact's changes committed a fraction of a millisecond apart come out of the feed in the order they were made:
// the feed numbers committed transactions by their last event's clock, which an outside test found kept to the
// millisecond, where such changes tie (and the tie went to a random number: 5 inversions in six runs).
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

const FEED = '/api/v1/events'
const STAGES = ['prospect', 'customer', 'ex_customer', 'lead']

t.test('changes of one contact within a millisecond come out of the feed in their order', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const ids: string[] = []
  for (const email of ['uno@b.it', 'due@b.it']) {
    ids.push((await request(app, key, { method: 'POST', url: LIST, payload: { email } })).json().id)
  }
  // 300 changes of the first contact and 2 of the second, each a transaction of its own, sent in one string so that
  // they follow each other as fast as the database takes them, and no reader between them: all wait to be numbered
  // together, and many share a millisecond.
  const change = (id: string, i: number) =>
    `BEGIN; UPDATE contacts SET stage = '${STAGES[i % STAGES.length]}' WHERE tenant_id = '${tenantId}' AND id = '${id}'; COMMIT;`
  const changes = Array.from({ length: 300 }, (_, i) => change(ids[0] as string, i))
  changes.splice(100, 0, change(ids[1] as string, 0))
  changes.splice(200, 0, change(ids[1] as string, 1))
  await app.db.withSession((session) => session.exec(changes.join('\n')))
  const [ties] = await app.db.query<{ n: number }>(
    'feed_order_ties',
    'SELECT (count(*) - count(DISTINCT occurred_at))::int AS n FROM events WHERE tenant_id = $1',
    [tenantId],
  )
  t.comment(`${ties?.n} events share their instant with another`)
  const seen: string[] = []
  let position: string | undefined
  for (;;) {
    const res = await request(app, key, {
      method: 'GET',
      url: `${FEED}?limit=200${position ? `&after=${position}` : ''}`,
    })
    t.equal(res.statusCode, 200)
    const page = res.json() as { data: { id: string }[]; next: string; hasMore: boolean }
    seen.push(...page.data.map((event) => event.id))
    position = page.next
    if (!page.hasMore) break
  }
  const rows = await app.db.query<{ id: string; contact: string; version: number }>(
    'feed_order_versions',
    `SELECT id, contact_id AS contact, (contact->>'version')::int AS version FROM events WHERE tenant_id = $1`,
    [tenantId],
  )
  t.equal(seen.length, 304, 'every change once')
  const byId = new Map(rows.map((row) => [row.id, row]))
  for (const contact of ids) {
    const versions = seen.flatMap((id) => {
      const row = byId.get(id)
      return row?.contact === contact ? [row.version] : []
    })
    t.same(
      versions,
      [...versions].sort((a, b) => a - b),
      `contact ${contact}: its ${versions.length} events in its versions' order`,
    )
  }
})
