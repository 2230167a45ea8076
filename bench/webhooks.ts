// What events and webhooks cost and deliver, on PostgreSQL (docs/performance.md, "Events and webhooks"):
//   1. a POST's and a PATCH's throughput with the events triggers on and off (alternating rounds, medians);
//   2. the feed read by one client following `next`, 200 events a page;
//   3. deliveries per second, one instance, to a receiver on loopback, from a backlog;
//   4. commit to receipt at 200 events per second: p50, p99, max.
// The service runs in this process (built from src/), its load comes from here too, so the figures are lower than
// a separate load generator would give, for both settings alike. Nothing is sent anywhere but 127.0.0.1.
//
//   tsx bench/webhooks.ts            # BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres)
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import pg from 'pg'
import { createApiKey } from '../src/admin/api-keys.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config/config.ts'
import { openDatabase } from '../src/db/database.ts'
import { deployMigrations } from '../src/db/migrate.ts'
import { Deliverer } from '../src/webhooks/deliverer.ts'
import { SecretBox } from '../src/webhooks/secrets.ts'
import { httpTransport } from '../src/webhooks/transport.ts'

const ROUND_SECONDS = Number(process.env.ROUND_SECONDS ?? 5)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const CLIENTS = 16
const RATE = 200
const RATE_SECONDS = 10

const adminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const name = `rubrica_bench_webhooks_${process.pid}`
const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString()
const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  await client.query(sql)
  await client.end()
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? 0

await admin(`CREATE DATABASE "${name}"`)
const database = await openDatabase({ url: dbUrl, poolSize: 8 })
try {
  await database.withSession((session) => deployMigrations(session))
  const key = Buffer.alloc(32, 9).toString('base64')
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    DATABASE_POOL_SIZE: '8',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'production',
    DEMO_ON_EMPTY: 'false',
    RATE_LIMIT_MAX: '1000000000',
    WEBHOOKS_ENABLED: 'false',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_SECRET_KEY: key,
  })
  const app = await buildApp(config, { database })
  const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/v1`
  // Ten tenants, as the main benchmark has: a tenant's writes queue on its events counter until they commit, so
  // the cost is measured with every writer on one tenant (the worst case) and with writers spread over ten.
  const keys: string[] = []
  for (let t = 0; t < 10; t++) {
    const tenant = await database.prisma.tenant.create({ data: { name: `Bench ${t}` } })
    const issued = await createApiKey(database.prisma, {
      tenantId: tenant.id,
      role: 'admin',
      scopes: ['contacts:read', 'contacts:write', 'webhooks:manage'],
    })
    keys.push(issued.key)
  }
  const call = (method: string, path: string, body?: unknown, tenant = 0) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${keys[tenant]}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  // 1. The events' cost.
  const ids: string[][] = keys.map(() => [])
  const throughput = async (write: (i: number, tenant: number) => Promise<Response>, tenants = 1) => {
    let done = 0
    const end = Date.now() + ROUND_SECONDS * 1000
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const tenant = client % tenants
        for (let i = client; Date.now() < end; i += CLIENTS) {
          const answer = await write(i, tenant)
          if (answer.status >= 300) throw new Error(`${answer.status} ${await answer.text()}`)
          if (answer.status === 201) ids[tenant]?.push(((await answer.json()) as { id: string }).id)
          else await answer.arrayBuffer()
          done++
        }
      }),
    )
    return done / ROUND_SECONDS
  }
  const triggers = (on: boolean) =>
    database.query(
      `bench_triggers_${on}`,
      `ALTER TABLE contacts ${on ? 'ENABLE' : 'DISABLE'} TRIGGER contacts_after_insert_events, ${on ? 'ENABLE' : 'DISABLE'} TRIGGER contacts_after_update_events`,
      [],
    )
  const writes = {
    POST: (i: number, tenant = 0) =>
      call('POST', '/contacts', { email: `b${randomBytes(6).toString('hex')}${i}@example.it` }, tenant),
    PATCH: (i: number, tenant = 0) => {
      const own = ids[tenant] ?? []
      return call(
        'PATCH',
        `/contacts/${own[i % own.length]}`,
        { firstName: `N${randomBytes(4).toString('hex')}` },
        tenant,
      )
    },
  }
  const cost: Record<string, { on: number; off: number }> = {}
  for (const tenants of [1, 10]) {
    for (const [operation, write] of Object.entries(writes)) {
      const on: number[] = []
      const off: number[] = []
      await throughput(write, tenants) // warm-up, and contacts for the PATCHes
      for (let round = 0; round < ROUNDS; round++) {
        for (const enabled of [true, false]) {
          await triggers(enabled)
          ;(enabled ? on : off).push(await throughput(write, tenants))
        }
      }
      await triggers(true)
      cost[`${operation}, ${tenants === 1 ? 'one tenant' : `${tenants} tenants`}`] = {
        on: median(on),
        off: median(off),
      }
    }
  }

  // 2. The feed, read by one client.
  let events = 0
  let next = '0'
  const feedStart = performance.now()
  for (;;) {
    const page = (await (await call('GET', `/events?after=${next}&limit=200`)).json()) as {
      data: unknown[]
      next: string
      hasMore: boolean
    }
    events += page.data.length
    next = page.next
    if (!page.hasMore) break
  }
  const feedRate = events / ((performance.now() - feedStart) / 1000)

  // 3 and 4: a receiver on loopback, one webhook, one deliverer.
  const arrivals = new Map<string, number>()
  const receiver = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      arrivals.set((JSON.parse(body) as { data: { id: string } }).data.id, performance.now())
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const address = receiver.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`
  const hook = await call('POST', '/webhooks', { url })
  if (hook.status !== 201) throw new Error(await hook.text())
  // The backlog: what ROUND_SECONDS of POSTs leave to deliver while no deliverer runs.
  await throughput(writes.POST)
  const pending = async () =>
    Number(
      (
        await database.query<{ n: string }>(
          'bench_pending',
          "SELECT count(*) AS n FROM deliveries WHERE state = 'pending'",
          [],
        )
      )[0]?.n,
    )
  const backlog = await pending()
  const transport = httpTransport({ allowInsecure: true })
  const deliverer = new Deliverer({
    db: database,
    box: new SecretBox(Buffer.from(key, 'base64')),
    send: transport.send,
    log: app.log,
    timeoutMs: 10_000,
    retrySchedule: [5],
  })
  const drainStart = performance.now()
  deliverer.start()
  while ((await pending()) > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  const deliveryRate = arrivals.size / ((performance.now() - drainStart) / 1000)

  arrivals.clear()
  const sentAt = new Map<string, number>()
  const rateEnd = performance.now() + RATE_SECONDS * 1000
  const writers: Promise<void>[] = []
  for (let i = 0; performance.now() < rateEnd; i++) {
    const at = performance.now()
    writers.push(
      writes.POST(i).then(async (answer) => {
        sentAt.set(((await answer.json()) as { id: string }).id, at)
      }),
    )
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at + 1000 / RATE - performance.now())))
  }
  await Promise.all(writers)
  const deadline = performance.now() + 30_000
  while ([...sentAt.keys()].some((id) => !arrivals.has(id)) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const latencies = [...sentAt].map(([id, at]) => (arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at)
  await deliverer.stop()
  transport.close()
  receiver.close()
  await app.close()

  const pct = (on: number, off: number) => `${(on / off).toFixed(2)}x`
  console.log(`events and webhooks, PostgreSQL, one instance (${CLIENTS} clients in the same process)`)
  for (const [operation, { on, off }] of Object.entries(cost)) {
    console.log(
      `  ${operation}: ${on.toFixed(0)}/s with events, ${off.toFixed(0)}/s without (${pct(on, off)}; target >= 0.80x)`,
    )
  }
  console.log(`  feed: ${events} events read by one client at ${feedRate.toFixed(0)} events/s (200 a page)`)
  console.log(
    `  deliveries: a backlog of ${backlog} to one webhook drained at ${deliveryRate.toFixed(0)}/s (target >= 1000/s)`,
  )
  console.log(
    `  ${RATE} events/s for ${RATE_SECONDS} s, request sent to receipt: p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
      `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (target p99 < 1000 ms)`,
  )
} finally {
  await database.close()
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
}
