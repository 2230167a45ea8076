// Regression: batch imports had no bound on the memory they held at once.
// Found by: a load review (issue #29, "One request must not stop every tenant").
// How it showed: one batch of 1,000 items of the largest size took the server to 489 MB of RSS, 4 at once to
// 0.93 GB, 16 to 2.64 GB and 32 to 3.26 GB (23 of them then failed with 408), and RSS stayed at 2.19 GB
// afterwards: one tenant inside its rate limit could get a small container killed.
// Fix: an instance admits batches up to BATCH_CONCURRENCY times the batch body limit (itself 7.4 MB, was 27 MB),
// refusing the rest with 503 server_busy and Retry-After before reading their body (src/contacts/batch/admission.ts);
// docs/operations.md ("Batch imports") states what batches may add to the RSS, and this test holds a burst to that.
// Without the fix all 32 batches are taken at once and the server's peak RSS exceeds the bound several times over.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { type Database, openDatabase } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { createTestDatabase } from '../database.ts'
import { largestBatchBody, largestTagNames } from '../largest-batch.ts'
import { start, waitFor } from '../process.ts'

const TENANTS = 8
const BATCHES_PER_TENANT = 4
const CONCURRENCY = 2

/** What docs/operations.md promises: the MB of RSS above idle, per batch the instance may hold and one more. */
function documentedMegabytes(): number {
  const page = readFileSync('docs/operations.md', 'utf8')
  const found = /within (\d+) MB × \(`BATCH_CONCURRENCY` \+ 1\) above/.exec(page)
  if (!found?.[1]) throw new Error('docs/operations.md states no bound on what batches add to the RSS')
  return Number(found[1])
}

/** Megabytes of a process's current and peak resident set (Linux). */
function memoryOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024
  return { now: mb('VmRSS'), peak: mb('VmHWM') }
}

/** Tenants that have the largest tags, so that every item of the largest batch is written and answered in full. */
async function importers(database: Database): Promise<string[]> {
  const keys: string[] = []
  for (let i = 0; i < TENANTS; i++) {
    const tenant = await database.prisma.tenant.create({ data: { name: `Importa ${i}` } })
    await database.prisma.tag.createMany({ data: largestTagNames().map((name) => ({ tenantId: tenant.id, name })) })
    const scopes: ['contacts:read', 'contacts:write'] = ['contacts:read', 'contacts:write']
    keys.push((await createApiKey(database.prisma, { tenantId: tenant.id, role: 'editor', scopes })).key)
  }
  return keys
}

t.test('32 largest batches sent at once keep the server within the RSS docs/operations.md states', async (t) => {
  let database: Record<string, string>
  let keys: string[]
  if (process.env.TEST_DATABASE_URL) {
    const testDatabase = await createTestDatabase({ poolSize: 1 })
    t.teardown(() => testDatabase.close())
    database = { DATABASE_URL: testDatabase.url ?? '' }
    keys = await importers(testDatabase.database)
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'rubrica-memory-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    database = { DATA_DIR: dir }
    const embedded = await openDatabase({ dataDir: dir })
    try {
      await embedded.withSession((session) => deployMigrations(session))
      keys = await importers(embedded)
    } finally {
      await embedded.close()
    }
  }
  const server = start({
    ...database,
    DEMO_ON_EMPTY: 'false',
    RATE_LIMIT_MAX: '100000',
    WEBHOOKS_ENABLED: 'false',
    BATCH_CONCURRENCY: String(CONCURRENCY),
  })
  t.teardown(() => server.child.kill('SIGKILL'))
  const base = (await waitFor(server, /Server listening at (http:\/\/[^"\s]+)/))[1] as string
  const pid = server.child.pid as number
  const post = (key: string, body: string) =>
    fetch(`${base}/api/v1/contacts/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    })

  // One small batch first: what the first request of a route compiles and loads is not what a batch holds.
  t.equal((await post(keys[0] as string, '{"contacts":[{"email":"primo@example.it"}]}')).status, 200)
  const idle = memoryOf(pid).now

  // Every tenant sends its batches at once, as an impatient import would (the same one, so that the test does
  // not hold 32 bodies itself: a batch sent again answers every contact in full too).
  const sent = await Promise.all(
    keys.flatMap((key, k) => {
      const body = largestBatchBody(`m${k}`)
      return Array.from({ length: BATCHES_PER_TENANT }, async () => {
        const res = await post(key, body)
        const answer = (await res.json()) as { created?: number; error?: { code: string } }
        return [res.status, answer.created ?? answer.error?.code]
      })
    }),
  )
  const written = sent.filter(([status]) => status === 200)
  t.ok(written.length >= 1 && written.length <= CONCURRENCY, `${written.length} batches admitted`)
  t.same(
    [...written, ...sent.filter(([status]) => status !== 200)],
    [...Array(written.length).fill([200, 1000]), ...Array(sent.length - written.length).fill([503, 'server_busy'])],
    'each written whole, the others refused with 503 server_busy',
  )
  const { peak } = memoryOf(pid)
  const bound = (CONCURRENCY + 1) * documentedMegabytes()
  t.ok(
    peak - idle <= bound,
    `peak RSS ${Math.round(peak)} MB, ${Math.round(peak - idle)} MB over the ${Math.round(idle)} MB before the ` +
      `batches; documented: at most ${bound} MB over it with BATCH_CONCURRENCY=${CONCURRENCY}`,
  )
})
