// Regression: a list cursor that is valid RFC 3339 but no instant the database can hold.
// Found by: the hostile-input fuzzing of GET /api/v1/contacts (docs/reliability-findings.md, "Failures found").
// How it showed: `cursor=1990-12-31T23:59:60Z` (a leap second), year 0 and instants past year 9999 pass the
// date-time format, then Date or PostgreSQL refuse them: 500.
// Fix: a cursor must be an instant PostgreSQL can store; anything else is 400 invalid_query naming "cursor".
// Without the fix each cursor below is answered 500.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('a cursor that is RFC 3339 but no storable instant is invalid_query, not a 500', async (t) => {
  const { app } = await build(t)
  const { key } = await createTenantWithKey(app)
  for (const cursor of [
    '2026-06-30T23:59:60Z',
    '2026-12-31T22:59:60-01:00',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-23:59',
  ]) {
    const res = await request(app, key, { method: 'GET', url: `${LIST}?cursor=${encodeURIComponent(cursor)}` })
    t.equal(res.statusCode, 400, `${cursor}: status`)
    t.equal(res.json().error?.code, 'invalid_query', `${cursor}: code`)
    t.match(res.json().error?.message, /"cursor"/, `${cursor}: names the parameter`)
  }
})
