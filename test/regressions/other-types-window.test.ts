// Regression: a follower of some event types read every event of the other types after its position, again and
// again. Found by: reading the webhooks' look while fixing the feed page's plan (issue #30).
// How it showed: a webhook of `contact.updated` alone, in a tenant that had imported contacts since, never moved
// (only a delivery moves a webhook): every look, once a second, read every `contact.created` after it, a million
// after a large import. A feed page filtered by type read as far as it had to for `limit` events, to the end.
// Fix: a look reads LOOK_WINDOW events at most and, finding none of its types, moves the webhook past them; a
// filtered page reads FEED_WINDOW at most and answers the events it found, possibly none, with `next` at the end
// of what it read and `hasMore` true.
import { createServer } from 'node:http'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { EventRepository } from '../../src/events/repository.ts'
import { pageStatement } from '../../src/events/sql.ts'
import { LOOK_SQL, LOOK_WINDOW } from '../../src/webhooks/sql.ts'
import { LIST } from '../fuzz/support.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import { planNodes, planUnder } from '../plans.ts'
import { until } from '../wait.ts'

const FEED = '/api/v1/events'

/**
 * The plan of `sql` where the planner reads events in the order of their index, as it does for a large table (for
 * the few rows of a test, sorting them is cheaper): what is checked is that the SQL bounds that scan.
 */
const inIndexOrder = (app: FastifyInstance, sql: string, params: unknown[], first?: [string, unknown[]]) =>
  planUnder(app, ['enable_seqscan', 'enable_bitmapscan', 'enable_sort'], sql, params, first)

/** Rows each scan of the events table read (kept and left out by its filter), in any node of `plan`. */
function eventsRead(plan: unknown): number[] {
  return planNodes(plan)
    .filter((node) => typeof node['Relation Name'] === 'string' && node['Relation Name'].startsWith('events'))
    .map(
      (node) =>
        Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1) +
        Number(node['Rows Removed by Filter'] ?? 0),
    )
}

t.test('a webhook moves past a window of events of other types, then delivers its own', async (t) => {
  const received: string[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received.push(String(req.headers['webhook-id']))
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0

  const { app } = await build(t, {
    WEBHOOKS_ENABLED: 'true',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_TIMEOUT_MS: '2000',
    RATE_LIMIT_MAX: '100000',
  })
  const { key, tenantId } = await createTenantWithKey(app)
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hook = await request(app, admin, {
    method: 'POST',
    url: '/api/v1/webhooks',
    payload: { url: `http://127.0.0.1:${port}/hook`, events: ['contact.updated'] },
  })
  t.equal(hook.statusCode, 201, 'the webhook is registered')
  const webhookId = hook.json().id as string
  const position = async () => {
    const rows = await app.db.query<{ seq: string; n: string }>(
      '',
      'SELECT seq::text AS seq, n::text AS n FROM webhook_cursors WHERE tenant_id = $1 AND webhook_id = $2',
      [tenantId, webhookId],
    )
    const row = rows[0]
    return row ? `${row.seq}/${row.n}` : ''
  }
  // Where the webhook starts: the feed's end when it was registered.
  const startedAt = await position()

  const created = LOOK_WINDOW * 2 + 10
  for (let from = 0; from < created; from += 1000) {
    const contacts = Array.from({ length: Math.min(1000, created - from) }, (_, i) => ({
      email: `creato.${from + i}@example.it`,
    }))
    const batch = await request(app, key, { method: 'POST', url: `${LIST}/batch`, payload: { contacts } })
    t.equal(batch.statusCode, 200, 'a batch of creations')
  }
  // A look from where the webhook started (the deliverer may have moved it since: put back, then rolled back).
  const [startSeq, startN] = startedAt.split('/')
  await app.events.sequence(tenantId)
  const look = await inIndexOrder(
    app,
    LOOK_SQL,
    [tenantId, webhookId, ['contact.updated'], 32, 32],
    [
      'UPDATE webhook_cursors SET seq = $3, n = $4 WHERE tenant_id = $1 AND webhook_id = $2',
      [tenantId, webhookId, startSeq, startN],
    ],
  )
  const reads = eventsRead(look)
  t.ok(
    reads.length > 0 && reads.every((read) => read <= LOOK_WINDOW + 1),
    `a look reads ${LOOK_WINDOW} events at most per scan, and the next: ${reads.join(', ')}`,
  )
  const end = (await request(app, key, { method: 'GET', url: `${FEED}?after=now` })).json().next as string
  // The feed's end as a position row: the last event's.
  const last = await app.db.query<{ seq: string; n: string }>(
    '',
    `SELECT k.seq::text AS seq, e.n::text AS n FROM event_commits k JOIN events e ON e.tenant_id = $1 AND e.txn = k.txn
     WHERE k.tenant_id = $1 AND k.seq IS NOT NULL ORDER BY k.seq DESC, e.n DESC LIMIT 1`,
    [tenantId],
  )
  const lastPosition = `${last[0]?.seq}/${last[0]?.n}`
  t.ok(end !== '0', 'the feed has an end')
  await until(async () => (await position()) === lastPosition, 'the webhook to move past the creations')
  t.not(await position(), startedAt, 'it moved, though nothing was delivered')
  t.same(received, [], 'and nothing was sent')

  const first = (await request(app, key, { method: 'GET', url: `${LIST}?limit=1` })).json().data[0]
  const patched = await request(app, key, {
    method: 'PATCH',
    url: `${LIST}/${first.id}`,
    payload: { stage: 'customer' },
  })
  t.equal(patched.statusCode, 200)
  const updates = (await request(app, key, { method: 'GET', url: `${FEED}?after=${end}` })).json().data
  t.equal(updates.length, 1, 'one event after the creations')
  await until(async () => received.length > 0, 'the update delivered')
  t.same(received, [updates[0].id], 'the update, its own type, is delivered')
})

t.test('a page filtered by type reads a window at most, and the walk still finds every event once', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const { key, tenantId } = await createTenantWithKey(app)
  const contacts = Array.from({ length: 23 }, (_, i) => ({ email: `finestra.${i}@example.it` }))
  await request(app, key, { method: 'POST', url: `${LIST}/batch`, payload: { contacts } })
  const list = (await request(app, key, { method: 'GET', url: `${LIST}?limit=100` })).json().data as { id: string }[]
  for (const contact of [list[3], list[15]]) {
    await request(app, key, { method: 'PATCH', url: `${LIST}/${contact?.id}`, payload: { stage: 'customer' } })
  }
  const all = (await request(app, key, { method: 'GET', url: `${FEED}?limit=200` })).json().data as {
    id: string
    type: string
  }[]
  t.equal(all.length, 25)
  const updates = all.filter((event) => event.type === 'contact.updated').map((event) => event.id)

  const WINDOW = 5
  const events = new EventRepository(app.db, 30, WINDOW)
  const found: string[] = []
  const pages: number[] = []
  let after: string | undefined
  for (let round = 0; round < 50; round++) {
    const page = await events.page(tenantId, { limit: 1, type: 'contact.updated', after })
    found.push(...page.data.map((event) => event.id))
    pages.push(page.data.length)
    after = page.next
    if (!page.hasMore) break
  }
  t.same(found, updates, 'every update once, in order')
  t.ok(pages.includes(0), 'some pages hold no event, only the position past what they read')
  t.ok(pages.length >= Math.ceil(25 / WINDOW), `${pages.length} pages for 25 events read ${WINDOW} at a time`)
  const end = await events.page(tenantId, { limit: 100, after: 'now' })
  t.equal(after, end.next, 'the walk ends at the feed’s end')

  // What the filtered page reads of the events table, node by node (a Citus worker's included): the window at most.
  const page = pageStatement(2, true, WINDOW)
  const plan = await inIndexOrder(app, page.sql, [tenantId, '0', '0', ['contact.updated']])
  const reads = eventsRead(plan)
  // One event past the window at most: it tells the sort by position that the window's last transaction is whole.
  t.ok(
    reads.length > 0 && reads.every((read) => read <= WINDOW + 1),
    `rows read per scan of events: ${reads.join(', ')}`,
  )
  // A type found at once: the page reads its window (the sort by position takes a transaction's events whole, up to
  // the window), and not where the window would end.
  const frequent = eventsRead(await inIndexOrder(app, page.sql, [tenantId, '0', '0', ['contact.created']]))
  t.ok(
    frequent.length > 0 && frequent.every((read) => read <= WINDOW + 1),
    `rows read per scan, creations: ${frequent.join(', ')}`,
  )

  // The updates come after the 23 creations: a first page of updates holds none of them, and says more follow.
  const first = await events.page(tenantId, { limit: 100, type: 'contact.updated' })
  t.same(first.data, [])
  t.equal(first.hasMore, true)
  // Unfiltered: as before, up to `limit` events whatever their types.
  const plain = await events.page(tenantId, { limit: 100 })
  t.equal(plain.data.length, 25)
  t.equal(plain.hasMore, false)
})
