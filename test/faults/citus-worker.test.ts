// A Citus worker stopped under a steady load of two tenants, one on each worker, then started again: the stopped
// worker's tenant gets 503 envelopes, each well within the connect timeout, never a 500; the other tenant is served
// as before; both are served again once the worker is back, with no restart; every create acknowledged is there.
// On a private cluster (the other tests keep the shared one), when the tests run on Citus (TEST_CITUS_WORKERS).
import t from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config/config.ts'
import { openDatabase } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { citusNodes } from '../database.ts'
import { startCitus } from '../services.ts'
import { until } from '../wait.ts'

const CONNECT_TIMEOUT_MS = 2000

if (citusNodes().length === 0) {
  t.comment('runs on Citus only (TEST_CITUS_WORKERS)')
} else {
  t.test('a worker stopped under load: its tenants get 503, the others are served, all recover', async (t) => {
    const citus = await startCitus()
    t.teardown(() => citus.stop())
    const setup = await openDatabase({ url: citus.url, poolSize: 1 })
    await setup.withSession((session) => deployMigrations(session))
    // One tenant on each worker: tenants are made until both workers have one.
    const byPort = new Map<number, { tenantId: string; key: string }>()
    while (byPort.size < 2) {
      const tenant = await setup.prisma.tenant.create({ data: { name: `Worker ${byPort.size}` } })
      const [placement] = await setup.query<{ port: number }>(
        'placement',
        `SELECT nodeport AS port FROM pg_dist_shard_placement
          WHERE shardid = get_shard_id_for_distribution_column('contacts', $1::uuid)`,
        [tenant.id],
      )
      if (!placement || byPort.has(placement.port)) continue
      const { key } = await createApiKey(setup.prisma, {
        tenantId: tenant.id,
        role: 'admin',
        scopes: ['contacts:read', 'contacts:write'],
      })
      byPort.set(placement.port, { tenantId: tenant.id, key })
    }
    await setup.close()
    const [survivor, stopped] = citus.workers
    if (!survivor || !stopped) throw new Error('two workers')
    const tenants = { kept: byPort.get(survivor.port), lost: byPort.get(stopped.port) }
    if (!tenants.kept || !tenants.lost) throw new Error('a tenant on each worker')

    const app = await buildApp(
      loadConfig({
        LOG_LEVEL: 'silent',
        DEMO_ON_EMPTY: 'false',
        METRICS_PORT: '0',
        DATABASE_URL: citus.url,
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        RATE_LIMIT_MAX: '100000',
        WEBHOOKS_ENABLED: 'false',
      }),
    )
    t.teardown(() => app.close())
    await app.ready()

    type Phase = 'before' | 'outage' | 'after'
    let phase: Phase = 'before'
    let running = true
    let sequence = 0
    const acknowledged: string[] = []
    const seen = new Map<string, number[]>()
    const slowest = new Map<string, number>()
    const problems: string[] = []
    const note = (who: 'kept' | 'lost', status: number) => {
      const key = `${who}:${phase}`
      seen.set(key, [...(seen.get(key) ?? []), status])
    }
    const worker = (who: 'kept' | 'lost') => async () => {
      const { key } = tenants[who] as { key: string }
      while (running) {
        const n = sequence++
        const started = performance.now()
        const res =
          n % 2 === 0
            ? await app.inject({
                method: 'POST',
                url: '/api/v1/contacts',
                headers: { authorization: `Bearer ${key}` },
                payload: { email: `${who}${n}@x.io` },
              })
            : await app.inject({
                method: 'GET',
                url: '/api/v1/contacts?limit=5',
                headers: { authorization: `Bearer ${key}` },
              })
        const took = performance.now() - started
        slowest.set(`${who}:${phase}`, Math.max(slowest.get(`${who}:${phase}`) ?? 0, took))
        note(who, res.statusCode)
        if (res.statusCode === 201) acknowledged.push(res.json().id)
        if (res.statusCode >= 500) {
          const { code, message } = res.json().error
          if (res.statusCode !== 503 || code !== 'service_unavailable' || !/non disponibile/.test(message)) {
            problems.push(`${who} ${phase} ${n % 2 === 0 ? 'POST' : 'GET'}: ${res.statusCode} ${code}`)
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
    const load = [worker('kept'), worker('kept'), worker('lost'), worker('lost')].map((run) => run())
    const successes = (key: string) => (seen.get(key) ?? []).filter((status) => status < 300).length
    await until(() => successes('kept:before') >= 5 && successes('lost:before') >= 5, 'the load to start', 30_000)

    phase = 'outage'
    await stopped.kill()
    await until(() => (seen.get('lost:outage') ?? []).filter((s) => s === 503).length >= 5, '503s', 30_000)
    await until(() => successes('kept:outage') >= 10, "the other tenant's answers", 30_000)
    await stopped.start()
    phase = 'after'
    await until(() => successes('lost:after') >= 5 && successes('kept:after') >= 5, 'recovery', 60_000)
    running = false
    await Promise.all(load)

    t.same(problems, [], 'every 5xx is a 503 with the Italian envelope')
    t.ok(
      (seen.get('kept:outage') ?? []).every((status) => status < 300),
      `the other worker's tenant is served throughout (${JSON.stringify(seen.get('kept:outage')?.length)} answers)`,
    )
    t.ok((seen.get('lost:outage') ?? []).includes(503), "the stopped worker's tenant gets 503")
    const waited = slowest.get('lost:outage') ?? 0
    t.ok(
      waited < CONNECT_TIMEOUT_MS + 1500,
      `no answer waited past the connect timeout (slowest ${Math.round(waited)} ms)`,
    )
    const stored = await app.db.prisma.contact.count({ where: { id: { in: acknowledged } } })
    t.equal(stored, acknowledged.length, `all ${acknowledged.length} acknowledged contacts are there`)
  })
}
