// Regression: a key whose scopes column was NULL got 500 on every route (issue #22).
// Found by: an outside attacker's review, with SQL (the CLI cannot make such a key).
// Fix: the column is NOT NULL with an empty default (migration api_key_scopes_not_null), and a key without
// scopes is refused as any key lacking the route's scope: 403 insufficient_scope.
import t from 'tap'
import { LIST } from '../fuzz/support.ts'
import { build, createTenantWithKey, request } from '../helper.ts'

t.test('scopes can no longer be NULL; an empty list is 403 insufficient_scope', async (t) => {
  const { app } = await build(t)
  const { key, tenantId } = await createTenantWithKey(app)
  await t.rejects(
    app.db.query('null_scopes', 'UPDATE api_keys SET scopes = NULL WHERE tenant_id = $1', [tenantId]),
    { code: '23502' },
    'the column refuses NULL',
  )
  // Also what SQL by hand can put in the list that is no scope name: NULL elements, a nested array.
  for (const scopes of ['{}', '{NULL}', '{{contacts:read}}']) {
    await app.db.query('odd_scopes', 'UPDATE api_keys SET scopes = $2::text[] WHERE tenant_id = $1', [tenantId, scopes])
    app.apiKeys.invalidateAll()
    const refused = await request(app, key, { method: 'GET', url: LIST })
    t.equal(refused.statusCode, 403, `scopes ${scopes}`)
    t.equal(refused.json().error.code, 'insufficient_scope')
    t.match(refused.json().error.message, /la chiave ha nessuno scope/, 'the message says the key has none')
  }
})
