// Liveness and readiness, for load balancers and orchestrators (database outages: test/faults/).
import t from 'tap'
import { build } from '../helper.ts'

t.test('health and readiness need no key and are not limited', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1' })
  for (let i = 0; i < 3; i++) {
    const health = await app.inject({ method: 'GET', url: '/health' })
    t.equal(health.statusCode, 200)
    t.same(health.json(), { status: 'ok' })
    t.notOk(health.headers['x-ratelimit-limit'])
  }
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready', database: 'up', redis: 'disabled' })
})
