// Regression: a page of the event feed took 1 to 2 s after a large import (PostgreSQL, 90,000 events).
// Found by: an outsider importing through the batch, then following the feed with a type filter (issue #30).
// How it showed: with the events table's statistics older than the import, the planner picked a bitmap scan and a
// sort for the page; the contact's JSON was built in the same query level, for every event after the position,
// before the LIMIT kept a page of them.
// Fix: the events are chosen (filtered, ordered, limited) in a subquery of their own and the JSON is built over
// what it keeps (eventRows in src/events/sql.ts), for the feed and for the webhooks' look alike.
// The plan is forced here (no index scans in the transaction) rather than waited for from stale statistics.
import t from 'tap'
import { pageStatement } from '../../src/events/sql.ts'
import { LOOK_SQL } from '../../src/webhooks/sql.ts'
import { LIST } from '../fuzz/support.ts'
import { addKey, build, createTenantWithKey, request } from '../helper.ts'
import { planNodes, planUnder } from '../plans.ts'

const EVENTS = 300
const PAGE = 10

/** How many times the plan (any node of it, a Citus worker's included) read `jsonb_populate_record`. */
function recordsBuilt(plan: unknown): number {
  return planNodes(plan)
    .filter((node) => node['Function Name'] === 'jsonb_populate_record')
    .reduce((sum, node) => sum + Number(node['Actual Loops'] ?? 0), 0)
}

t.test('a page builds the JSON of the events it keeps alone, whatever plan chooses them', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '100000', WEBHOOKS_ALLOW_INSECURE: 'true' })
  const { key, tenantId } = await createTenantWithKey(app)
  // The webhook first: it follows the events recorded after it.
  const admin = await addKey(app, tenantId, 'admin', ['webhooks:manage', 'contacts:read'])
  const hook = await request(app, admin, {
    method: 'POST',
    url: '/api/v1/webhooks',
    payload: { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] },
  })
  t.equal(hook.statusCode, 201, 'the webhook is registered')
  const contacts = Array.from({ length: EVENTS }, (_, i) => ({ email: `evento.${i}@example.it` }))
  const batch = await request(app, key, { method: 'POST', url: `${LIST}/batch`, payload: { contacts } })
  t.equal(batch.statusCode, 200, 'the batch is written')
  const webhookId = hook.json().id as string

  await app.events.sequence(tenantId)
  const page = pageStatement(PAGE, true)
  const cases = [
    { what: 'the feed, filtered by type', sql: page.sql, params: [tenantId, '0', '0', ['contact.created']] },
    { what: 'the webhooks’ look', sql: LOOK_SQL, params: [tenantId, webhookId, ['contact.created'], PAGE, 5] },
  ]
  for (const { what, sql, params } of cases) {
    const plan = await planUnder(app, ['enable_indexscan', 'enable_indexonlyscan'], sql, params)
    const text = JSON.stringify(plan)
    t.match(text, /Sort/, `${what}: the plan sorts the events (no index gives their order)`)
    const built = recordsBuilt(plan)
    t.ok(built > 0 && built <= PAGE, `${what}: ${built} records built, at most the ${PAGE} kept of ${EVENTS}`)
  }

  // The page the API serves is the start of the longer one: the same events, in the same order.
  const feed = async (limit: number) => {
    const res = await request(app, key, { method: 'GET', url: `/api/v1/events?type=contact.created&limit=${limit}` })
    return (res.json().data as { id: string }[]).map((event) => event.id)
  }
  const long = await feed(200)
  t.equal(long.length, 200)
  t.same(await feed(PAGE), long.slice(0, PAGE))
})
