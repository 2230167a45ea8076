// PostgreSQL killed under a steady load of creates and reads, then restarted: 503 envelopes meanwhile, no
// crash, recovery without a restart, and every contact acknowledged with 201 still there afterwards.
import t from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/config.ts'
import { openDatabase } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { startPostgres } from '../services.ts'

t.test('database outage under load', async (t) => {
  const postgres = await startPostgres()
  t.teardown(() => postgres.stop())
  const setup = await openDatabase({ url: postgres.url, poolSize: 1 })
  await setup.withSession((session) => deployMigrations(session))
  const tenant = await setup.prisma.tenant.create({ data: { name: 'Load' } })
  const { key } = await createApiKey(setup.prisma, {
    tenantId: tenant.id,
    role: 'admin',
    scopes: ['contacts:read', 'contacts:write'],
  })
  await setup.close()

  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DEMO_ON_EMPTY: 'false',
    METRICS_PORT: '0',
    DATABASE_URL: postgres.url,
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
    RATE_LIMIT_MAX: '100000',
    AUTH_CACHE_TTL_MS: '5000',
  })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()

  const acknowledged: string[] = []
  const statuses = new Map<number, number>()
  const bodies: { status: number; code: string; message: string }[] = []
  let phase: 'before' | 'outage' | 'after' = 'before'
  const outageStatuses = new Set<number>()
  let sequence = 0
  let running = true
  const worker = async () => {
    while (running) {
      const n = sequence++
      const res =
        n % 2 === 0
          ? await app.inject({
              method: 'POST',
              url: '/api/v1/contacts',
              headers: { authorization: `Bearer ${key}` },
              payload: { email: `load${n}@x.io` },
            })
          : await app.inject({
              method: 'GET',
              url: '/api/v1/contacts?limit=5',
              headers: { authorization: `Bearer ${key}` },
            })
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      if (res.statusCode === 201) acknowledged.push(res.json().id)
      if (phase === 'outage') outageStatuses.add(res.statusCode)
      if (res.statusCode >= 500) bodies.push({ status: res.statusCode, ...res.json().error })
      if (phase === 'outage') await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const workers = Array.from({ length: 4 }, worker)

  // Steady load first: wait for some acknowledged creates (bounded), however slow the machine is.
  const loadedBy = Date.now() + 20_000
  while (acknowledged.length < 5 && Date.now() < loadedBy) await new Promise((resolve) => setTimeout(resolve, 50))
  const beforeOutage = acknowledged.length
  phase = 'outage'
  await postgres.kill()
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 503, 'not ready while the database is down')
  t.equal(ready.json().database, 'down')
  await postgres.start()
  phase = 'after'
  // Recovery needs no restart: wait for the first success after the outage.
  const recoveredBy = Date.now() + 15_000
  const countAtRestart = acknowledged.length
  while (acknowledged.length === countAtRestart && Date.now() < recoveredBy) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  running = false
  await Promise.all(workers)

  t.ok(beforeOutage > 0, `${beforeOutage} contacts created before the outage`)
  t.ok(acknowledged.length > countAtRestart, 'creates succeed again after the restart')
  t.ok(outageStatuses.has(503), 'the outage was answered with 503')
  t.same(
    [...statuses.keys()].filter((s) => s >= 500 && s !== 503),
    [],
    `no other 5xx (statuses seen: ${JSON.stringify([...statuses])})`,
  )
  t.ok(
    bodies.every((b) => b.status === 503 && b.code === 'service_unavailable' && /non disponibile/.test(b.message)),
    'every 503 is the Italian envelope',
  )
  t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200, 'ready again')

  const stored = await app.db.prisma.contact.findMany({ where: { id: { in: acknowledged } }, select: { id: true } })
  t.equal(stored.length, acknowledged.length, `all ${acknowledged.length} acknowledged contacts are present`)
})
