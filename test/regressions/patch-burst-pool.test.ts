// Regression: a burst of PATCHes on PostgreSQL failed with 500 instead of waiting for a pooled connection.
// Found by: a burst on PostgreSQL after the fix of patch-answers-own-write (docs/reliability-findings.md, "Failures found").
// How it showed: PATCH ran an interactive transaction; Prisma gives up starting one after 2 s (P2028), so with
// 1,500 PATCHes at once on a pool of 4 connections about 20% were answered 500.
// Fix: PATCH is one `UPDATE … RETURNING` through Prisma, no interactive transaction; it waits for the pool like
// any query. Without the fix, on PostgreSQL, some of the PATCHes below are answered 500.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('a burst of PATCHes waits for the pool instead of failing with 500', async (t) => {
  // Waiting for the pool is bounded by DATABASE_CONNECT_TIMEOUT_MS (503 past it, as the README promises): on a
  // loaded machine 1,500 PATCHes through 4 connections can take longer than its 5 s default.
  const { app } = await build(t, { RATE_LIMIT_MAX: '1000000', DATABASE_CONNECT_TIMEOUT_MS: '60000' })
  const { key } = await createTenantWithKey(app)
  const ids: string[] = []
  for (let i = 0; i < 20; i++) {
    ids.push((await request(app, key, { method: 'POST', url: LIST, payload: { email: `burst${i}@x.io` } })).json().id)
  }
  // 1500 overflow the 2 s on PostgreSQL's pool of 4; PGlite queues them without a limit, so fewer will do there.
  const burst = process.env.TEST_DATABASE_URL ? 1500 : 100
  const results = await Promise.all(
    Array.from({ length: burst }, (_, i) =>
      request(app, key, { method: 'PATCH', url: `${LIST}/${ids[i % ids.length]}`, payload: { stage: 'customer' } }),
    ),
  )
  const failed = results.filter((r) => r.statusCode >= 500)
  t.equal(failed.length, 0, `${failed.length} of ${burst} concurrent PATCHes failed: ${failed[0]?.body ?? ''}`)
})
