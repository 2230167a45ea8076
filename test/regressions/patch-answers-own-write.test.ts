// Regression: a PATCH answered with the values of another PATCH of the same contact made at the same time.
// Found by: the races suite, concurrent PATCHes (test/fuzz/races.test.ts; docs/reliability-findings.md, "Failures found").
// How it showed: Prisma's update-with-include is an UPDATE followed by a separate SELECT, and another PATCH could
// land between the two: the answer mixed in that PATCH's values.
// Fix: the read moved into the update's transaction; now a single `UPDATE … RETURNING`.
// Without the fix some of the 40 updates below answer with another update's values.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('each PATCH answers with the state it wrote, even when others write at once', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  const statuses = ['active', 'bounced', 'complained', 'suppressed'] as const
  let mixed = 0
  for (let round = 0; round < 5; round++) {
    const contact = await request(app, key, { method: 'POST', url: LIST, payload: { email: `race${round}@x.io` } })
    const patches = Array.from({ length: 8 }, (_, i) => ({ firstName: `F${i}`, emailStatus: statuses[i % 4] }))
    const results = await Promise.all(patches.map((patch) => app.contacts.update(tenantId, contact.json().id, patch)))
    results.forEach((result, i) => {
      const written = result.kind === 'updated' ? result.contact : null
      if (written?.firstName !== patches[i]?.firstName || written?.emailStatus !== patches[i]?.emailStatus) mixed++
    })
  }
  t.equal(mixed, 0, `${mixed} of 40 concurrent updates answered with another update's values`)
})
