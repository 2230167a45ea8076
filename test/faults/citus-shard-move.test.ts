// A writing tenant's shards move to another Citus worker while a follower polls its feed and a webhook receives
// its events, the worker it leaves ahead of the other in transaction ids (as a busy node is): moved with
// citus_move_shard_placement, and, on a cluster that grows by a worker as docs/deployment.md "Adding a worker"
// says, isolated to a shard of its own (isolate_tenant_to_new_shard) and moved there. Each time: every create
// acknowledged is in the feed once, in the order acknowledged, and reaches the webhook; reading the feed again from
// its start gives the same events. Positions are rows of the tenant's shards (decision 0009): they move with them.
// On private clusters, when the tests run on Citus.
import { createServer } from 'node:http'
import t, { type Test } from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/config.ts'
import { type Database, openDatabase } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { citusNodes } from '../database.ts'
import { type PrivateCitus, type PrivateServer, startCitus } from '../services.ts'
import { until } from '../wait.ts'

const LIST = '/api/v1/contacts'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Event {
  id: string
  type: string
  data: { id: string }
}

/** Where the tenant's contacts shard is: its worker's port, the shard, and whether the shard holds that tenant alone. */
async function placementOf(setup: Database, tenantId: string) {
  const [row] = await setup.query<{ port: number; shard: string; alone: boolean }>(
    'placement',
    `SELECT p.nodeport AS port, p.shardid::text AS shard, s.shardminvalue = s.shardmaxvalue AS alone
      FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid)
      WHERE p.shardid = get_shard_id_for_distribution_column('contacts', $1::uuid)`,
    [tenantId],
  )
  if (!row) throw new Error('the tenant has no shard')
  return row
}

/** Puts `server` a few thousand transaction ids ahead, as a busy node is. */
async function burnTransactionIds(server: PrivateServer): Promise<void> {
  const db = await openDatabase({ url: server.url, poolSize: 1 })
  for (let i = 0; i < 3000; i++) await db.query('', 'SELECT pg_current_xact_id()', [])
  await db.close()
}

/**
 * A tenant on `citus` writing about 60 contacts a second, a follower polling its feed every 50 ms and a webhook
 * to a loopback receiver, while `change` runs; then the checks of the header.
 */
async function writeFollowAndDeliver(
  t: Test,
  citus: PrivateCitus,
  change: (setup: Database, tenantId: string) => Promise<void>,
): Promise<void> {
  const setup = await openDatabase({ url: citus.url, poolSize: 1 })
  t.teardown(() => setup.close())
  await setup.withSession((session) => deployMigrations(session))
  const tenant = await setup.prisma.tenant.create({ data: { name: 'In viaggio' } })
  const { key } = await createApiKey(setup.prisma, {
    tenantId: tenant.id,
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write', 'webhooks:manage'],
  })

  const delivered = new Set<string>()
  const receiver = createServer((request, response) => {
    delivered.add(String(request.headers['webhook-id']))
    request.resume()
    request.on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => receiver.close(resolve)))
  const port = (receiver.address() as { port: number }).port

  const app = await buildApp(
    loadConfig({
      LOG_LEVEL: 'silent',
      DEMO_ON_EMPTY: 'false',
      METRICS_PORT: '0',
      DATABASE_URL: citus.url,
      RATE_LIMIT_MAX: '100000',
      WEBHOOKS_ALLOW_INSECURE: 'true',
      WEBHOOKS_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    }),
  )
  t.teardown(() => app.close())
  await app.ready()
  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({ method, url, payload, headers: { authorization: `Bearer ${key}` } })
  t.equal((await call('POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${port}/hook` })).statusCode, 201)
  const start = (await call('GET', '/api/v1/events?after=now')).json().next as string

  const acknowledged: string[] = []
  const refused: number[] = []
  let longestWrite = 0
  let writing = true
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const began = performance.now()
      const res = await call('POST', LIST, { email: `viaggio.${i}@example.it` })
      longestWrite = Math.max(longestWrite, performance.now() - began)
      if (res.statusCode === 201) acknowledged.push(res.json().id)
      else refused.push(res.statusCode)
      await sleep(15)
    }
  })()
  const followed: Event[] = []
  const positions: bigint[] = []
  const readsRefused: number[] = []
  let position = start
  let following = true
  const follower = (async () => {
    while (following) {
      const res = await call('GET', `/api/v1/events?after=${position}&limit=200`)
      if (res.statusCode === 200) {
        followed.push(...(res.json().data as Event[]))
        position = res.json().next
        positions.push(BigInt(position))
      } else readsRefused.push(res.statusCode)
      await sleep(50)
    }
  })()

  await sleep(1000)
  await change(setup, tenant.id)
  await sleep(1000)
  writing = false
  await writer
  await until(async () => {
    const seen = new Set(followed.filter((e) => e.type === 'contact.created').map((e) => e.data.id))
    return acknowledged.every((id) => seen.has(id))
  }, 'the follower to see every create')
  following = false
  await follower

  t.comment(`longest create during the move: ${Math.round(longestWrite)} ms; refused: ${refused.length}`)
  t.ok(acknowledged.length > 60, `${acknowledged.length} creates acknowledged`)
  t.ok(
    refused.every((status) => status === 503),
    `refusals, if any, are 503: ${[...new Set(refused)].join(', ')}`,
  )
  t.same(readsRefused, [], 'the feed is read throughout')
  const ids = followed.map((event) => event.id)
  t.equal(new Set(ids).size, ids.length, 'no event twice')
  t.ok(
    positions.every((p, i) => i === 0 || p >= (positions[i - 1] as bigint)),
    'positions only move forward',
  )
  const created = followed.filter((e) => e.type === 'contact.created').map((e) => e.data.id)
  t.same(created, acknowledged, 'every create acknowledged, once, in the order acknowledged')
  const again: string[] = []
  for (let after = start; ; ) {
    const page = (await call('GET', `/api/v1/events?after=${after}&limit=200`)).json()
    if (page.data.length === 0) break
    again.push(...(page.data as Event[]).map((event) => event.id))
    after = page.next
  }
  t.same(again, ids, 'the feed read again from the start gives the same events')
  await until(async () => ids.every((id) => delivered.has(id)), 'the webhook to get every event')
  t.pass('the webhook got every event')
}

if (citusNodes().length === 0) {
  t.comment('runs on Citus only (TEST_CITUS_WORKERS)')
} else {
  t.test('a writing tenant moved to the other worker', async (t) => {
    const citus = await startCitus()
    t.teardown(() => citus.stop())
    await writeFollowAndDeliver(t, citus, async (setup, tenantId) => {
      const from = await placementOf(setup, tenantId)
      const source = citus.workers.find((worker) => worker.port === from.port)
      const target = citus.workers.find((worker) => worker.port !== from.port)
      if (!source || !target) throw new Error('two workers, the tenant on one')
      await burnTransactionIds(source)
      await setup.query(
        'move',
        `SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2::int, '127.0.0.1', $3::int,
          shard_transfer_mode => 'block_writes')`,
        [from.shard, source.port, target.port],
      )
      t.equal((await placementOf(setup, tenantId)).port, target.port, 'the tenant is on the other worker')
    })
  })

  t.test('a worker added, a writing tenant isolated to a shard of its own and moved onto it', async (t) => {
    const citus = await startCitus({ spares: 1 })
    t.teardown(() => citus.stop())
    const [worker] = citus.workers
    const [added] = citus.spares
    if (!worker || !added) throw new Error('one worker and one spare')
    await burnTransactionIds(worker)
    await writeFollowAndDeliver(t, citus, async (setup, tenantId) => {
      // docs/deployment.md, "Adding a worker": the node joins, then the rebalancer spreads the shards.
      await setup.query('add', `SELECT citus_add_node('127.0.0.1', $1::int)`, [added.port])
      await setup.query(
        'isolate',
        `SELECT isolate_tenant_to_new_shard('contacts', $1::uuid, 'CASCADE', shard_transfer_mode => 'block_writes')`,
        [tenantId],
      )
      await setup.query('rebalance', `SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes')`, [])
      await setup.query('wait', 'SELECT citus_rebalance_wait()', [])
      const isolated = await placementOf(setup, tenantId)
      t.ok(isolated.alone, 'the tenant has a shard of its own')
      if (isolated.port !== added.port) {
        await setup.query(
          'move',
          `SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2::int, '127.0.0.1', $3::int,
            shard_transfer_mode => 'block_writes')`,
          [isolated.shard, isolated.port, added.port],
        )
      }
      t.equal((await placementOf(setup, tenantId)).port, added.port, 'the tenant is on the added worker')
    })
  })
}
