// The key cache under a flood of unknown keys: refused keys are remembered apart from known ones, so a flood can
// only push out other refused keys, never a key in use.
import t from 'tap'
import { hashApiKey } from '../../src/auth/api-key.ts'
import { ApiKeyRepository } from '../../src/auth/key-repository.ts'
import type { Database } from '../../src/db/database.ts'

const KNOWN = 'svc_'.padEnd(52, 'a')

/** A database that knows one key and counts the lookups it answers. */
function fakeDatabase() {
  const lookups: string[] = []
  const database = {
    async query(name: string, _sql: string, params: unknown[]) {
      if (name !== 'api_keys_resolve') return []
      lookups.push(String(params[0]))
      return params[0] === hashApiKey(KNOWN)
        ? [
            {
              id: 'k',
              tenantId: 't',
              tenantStatus: 'active',
              role: 'admin',
              scopes: ['contacts:read'],
              revokedAt: null,
              lastUsedAt: new Date(),
            },
          ]
        : []
    },
  } as unknown as Database
  return { database, lookups }
}

t.test('a flood of unknown keys does not push a known key out of the cache', async (t) => {
  const { database, lookups } = fakeDatabase()
  // A TTL no run reaches (a loaded machine took the flood past 5 s): what may push the key out is the flood alone.
  const keys = new ApiKeyRepository(database, 600_000, () => {})
  t.ok(await keys.resolve(hashApiKey(KNOWN)), 'the known key resolves')
  let refused = 0
  for (let i = 0; i < 25_000; i++) {
    if ((await keys.resolve(hashApiKey(`svc_${String(i).padStart(48, '0')}`))) === null) refused++
  }
  t.equal(refused, 25_000, 'every unknown key is refused')
  const before = lookups.length
  t.ok(keys.cached(hashApiKey(KNOWN)), 'still cached after 25,000 unknown keys')
  t.ok(await keys.resolve(hashApiKey(KNOWN)))
  t.equal(lookups.length, before, 'and resolved without a database lookup')
})

t.test('an unknown key is looked up once, then answered from the cache', async (t) => {
  const { database, lookups } = fakeDatabase()
  const keys = new ApiKeyRepository(database, 5000, () => {})
  const unknown = hashApiKey(`svc_${'f'.repeat(48)}`)
  t.equal(keys.cached(unknown), undefined, 'nothing known before the lookup')
  t.equal(await keys.resolve(unknown), null)
  t.equal(keys.cached(unknown), null, 'remembered as refused')
  t.equal(await keys.resolve(unknown), null)
  t.equal(lookups.length, 1)
})
