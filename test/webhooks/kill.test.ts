// The server killed with SIGKILL in the middle of a burst of writes: after a restart on the same database, every
// event committed before the kill reaches the webhook (a duplicate is allowed, a loss never). The real entry point
// runs as a child process, on the embedded database in a fresh DATA_DIR or on a fresh PostgreSQL database; the
// receiver is on loopback.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createApiKey } from '../../src/admin/api-keys.ts'
import { type Database, openDatabase } from '../../src/db/database.ts'
import { deployMigrations } from '../../src/db/migrate.ts'
import { createTestDatabase } from '../database.ts'
import { TEST_WEBHOOKS_KEY } from '../helper.ts'
import { start, waitFor } from '../process.ts'
import { until } from '../wait.ts'

async function adminKey(database: Database): Promise<string> {
  const tenant = await database.prisma.tenant.create({ data: { name: 'Kill' } })
  const scopes = ['contacts:read', 'contacts:write', 'webhooks:manage'] as const
  return (await createApiKey(database.prisma, { tenantId: tenant.id, role: 'admin', scopes: [...scopes] })).key
}

t.test('killed with SIGKILL during a burst, restarted: every committed event is delivered', async (t) => {
  const received = new Set<string>()
  const receiver = createServer((request, response) => {
    received.add(String(request.headers['webhook-id']))
    request.resume()
    request.on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    receiver.closeAllConnections()
    receiver.close()
  })
  const address = receiver.address()
  const hookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`

  // The tenant and its key are made before the server starts, the way the CLI makes them (one opening of the
  // database instead of one per command: on the embedded database each opening is slow).
  let database: Record<string, string>
  let key: string
  if (process.env.TEST_DATABASE_URL) {
    const testDatabase = await createTestDatabase({ poolSize: 1 })
    t.teardown(() => testDatabase.close())
    database = { DATABASE_URL: testDatabase.url ?? '' }
    key = await adminKey(testDatabase.database)
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'rubrica-kill-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    database = { DATA_DIR: dir }
    const embedded = await openDatabase({ dataDir: dir })
    try {
      await embedded.withSession((session) => deployMigrations(session))
      key = await adminKey(embedded)
    } finally {
      await embedded.close()
    }
  }
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const env = {
    ...database,
    DEMO_ON_EMPTY: 'false',
    RATE_LIMIT_MAX: '100000',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_SECRET_KEY: TEST_WEBHOOKS_KEY,
    WEBHOOKS_TIMEOUT_MS: '1000',
    WEBHOOKS_RETRY_SCHEDULE: '1,1,1',
  }
  const listening = /Server listening at (http:\/\/[^"\s]+)/

  const first = start(env)
  t.teardown(() => first.child.kill('SIGKILL'))
  const url = (await waitFor(first, listening))[1] as string
  const hook = await fetch(`${url}/api/v1/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: hookUrl }),
  })
  t.equal(hook.status, 201)

  // Six writers until the kill; it comes once 60 creates have been acknowledged, with writes still in flight.
  const acknowledged: string[] = []
  let n = 0
  const writers = Array.from({ length: 6 }, async () => {
    for (;;) {
      const body = JSON.stringify({ email: `kill${n++}@example.it` })
      try {
        const created = await fetch(`${url}/api/v1/contacts`, { method: 'POST', headers, body })
        if (created.status === 201) acknowledged.push(((await created.json()) as { id: string }).id)
        if (acknowledged.length === 60) first.child.kill('SIGKILL')
      } catch {
        return
      }
    }
  })
  await Promise.all(writers)
  t.equal(await first.exited, null, 'killed, not exited')
  const beforeRestart = received.size
  t.ok(acknowledged.length >= 60, `${acknowledged.length} creates acknowledged before the kill`)

  const second = start(env)
  t.teardown(() => second.child.kill('SIGKILL'))
  const again = (await waitFor(second, listening))[1] as string
  const events: { id: string; data: { id: string } }[] = []
  let next = ''
  for (;;) {
    const page = (await (
      await fetch(`${again}/api/v1/events?limit=200${next ? `&after=${next}` : ''}`, { headers })
    ).json()) as { data: typeof events; next: string; hasMore: boolean }
    events.push(...page.data)
    next = page.next
    if (!page.hasMore) break
  }
  const recorded = new Set(events.map((event) => event.data.id))
  t.ok(
    acknowledged.every((id) => recorded.has(id)),
    'every acknowledged create has its event',
  )
  await until(() => events.every((event) => received.has(event.id)), 'every committed event delivered', 60_000)
  t.pass(
    `${events.length} events committed before the kill, ${beforeRestart} delivered before it, all ${events.length} after the restart`,
  )
})
