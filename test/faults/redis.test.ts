// Redis killed and restarted under load (two clients all along) with REDIS_URL set: never a 500, rate limits fall back to per-instance
// counters (logged once), readiness reports the degradation, and shared counting resumes when Redis is back.
import { Redis } from 'ioredis'
import t from 'tap'
import { build, createTenantWithKey, request } from '../helper.ts'
import { startRedis } from '../services.ts'
import { until } from '../wait.ts'

const LIST = '/api/v1/contacts'

t.test('Redis outage', async (t) => {
  const redisServer = await startRedis()
  t.teardown(() => redisServer.stop())
  const lines: string[] = []
  const { app } = await build(
    t,
    { REDIS_URL: redisServer.url, RATE_LIMIT_MAX: '1000', LOG_LEVEL: 'info' },
    { write: (line: string) => lines.push(line) },
  )
  const { key, tenantId } = await createTenantWithKey(app)
  const probe = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  t.teardown(() => probe.disconnect())
  await probe.connect()

  await until(() => app.redis?.available === true, 'Redis to be available', 10_000)
  for (let i = 0; i < 3; i++) t.equal((await request(app, key, { method: 'GET', url: LIST })).statusCode, 200)
  const sharedKey = `rubrica:rate:tenant:${tenantId}`
  t.equal(await probe.get(sharedKey), '3', 'counted in Redis')
  probe.disconnect()

  // Background load for the whole outage and recovery: every answer must be a 200, whatever Redis is doing. Paced
  // (20 requests a second), so that it stays under the limit and lets timers run: an injected request that never
  // waits for I/O settles in microtasks alone, and an unpaced loop of them would starve the event loop.
  let loading = true
  t.teardown(() => {
    loading = false
  })
  const background: number[] = []
  const load = Array.from({ length: 2 }, async () => {
    while (loading) {
      background.push((await request(app, key, { method: 'GET', url: LIST })).statusCode)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })

  await redisServer.kill()
  const during: number[] = []
  // Requests made before the connection notices the loss fall back command by command; then the link is down.
  during.push((await request(app, key, { method: 'GET', url: LIST })).statusCode)
  await until(() => app.redis?.available === false, 'Redis to be seen down', 10_000)
  for (let i = 0; i < 40; i++) during.push((await request(app, key, { method: 'GET', url: LIST })).statusCode)
  t.same([...new Set(during)], [200], 'requests keep being served while Redis is down')
  const limitedLocally = await request(app, key, { method: 'GET', url: LIST })
  t.ok(Number(limitedLocally.headers['x-ratelimit-remaining']) < 1000, 'counted per instance meanwhile')
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'degraded', database: 'up', redis: 'down' })
  const warnings = lines.filter((line) => line.includes('Redis unreachable'))
  t.equal(warnings.length, 1, 'the degradation is logged once, not per request')

  await redisServer.start()
  await until(() => app.redis?.available === true, 'Redis to be available again', 15_000)
  // Some of the load after the return, counted in the restarted Redis.
  const returned = background.length
  await until(() => background.length > returned + 10, 'more answers in the background', 10_000)
  loading = false
  await Promise.all(load)
  t.ok(background.length > 10, `${background.length} requests in the background`)
  t.same([...new Set(background)], [200], 'the background load saw only 200s through the outage and the return')
  const back = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 0 })
  back.on('error', () => {})
  t.teardown(() => back.disconnect())
  await back.connect()
  const counted = Number(await back.get(sharedKey))
  t.ok(counted > 0, `the load after the return was counted in Redis (${counted})`)
  t.equal((await request(app, key, { method: 'GET', url: LIST })).statusCode, 200)
  t.equal(Number(await back.get(sharedKey)), counted + 1, 'counting is shared again once Redis is back')
  t.ok(
    lines.some((line) => line.includes('Redis reachable')),
    'the recovery is logged',
  )
})
