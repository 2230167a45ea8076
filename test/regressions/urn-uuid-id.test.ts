// Regression: a contact id in `urn:uuid:<uuid>` form.
// Found by: the hostile-input fuzzing of GET and PATCH /api/v1/contacts/:id (docs/reliability.md).
// How it showed: Ajv's `uuid` format accepts the urn: form (and braces), PostgreSQL's uuid parser reads such text
// differently: 500.
// Fix: an id must be a plain 36-character UUID (src/schemas/common.ts UUID); anything else is the usual 404.
// Without the fix both requests below are answered 500.
import t from 'tap'
import { LIST, referenceNotFound } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('an id in urn:uuid: form is an id that is not a UUID: the usual 404, not a 500', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  const created = await request(app, key, { method: 'POST', url: LIST, payload: { email: 'base@x.io' } })
  const notFound = await referenceNotFound(app, key)
  for (const method of ['GET', 'PATCH'] as const) {
    const res = await request(app, key, {
      method,
      url: `${LIST}/urn:uuid:${created.json().id}`,
      ...(method === 'PATCH' && { payload: { stage: 'customer' } }),
    })
    t.equal(res.statusCode, 404, `${method}: status`)
    t.equal(res.body, notFound.body, `${method}: the usual 404 body`)
  }
})
