import t from 'tap'
import { build, createTenantWithKey, request } from '../test/helper.ts'

t.test('one tenant, 8 overlapping batches at once', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000000', BATCH_CONCURRENCY: '8', DATABASE_POOL_SIZE: '10' })
  const { key } = await createTenantWithKey(app)
  const statuses: Record<string, number> = {}
  for (let round = 0; round < 4; round++) {
    const batches = Array.from({ length: 16 }, (_, b) => {
      const items = Array.from({ length: 400 }, (_, i) => ({ email: `p${round}.${(i * 7 + b * 131) % 450}@example.it`, firstName: `N${b}` }))
      return request(app, key, { method: 'POST', url: '/api/v1/contacts/batch', payload: { contacts: items } })
    })
    for (const r of await Promise.all(batches)) statuses[r.statusCode] = (statuses[r.statusCode] ?? 0) + 1
  }
  console.log(statuses)
  t.same(Object.keys(statuses), ['200'])
})
