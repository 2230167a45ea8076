// What the erasure tests share: tenants' keys and webhook settings, a receiver on loopback, the feed walked whole,
// another instance on the same database, a person's data unlike anything else, and the search for its traces in
// every row of every table and in a pg_dump. Not a test file (no `.test.` in the name): tap does not run it.
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../../src/app.ts'
import type { Scope } from '../../src/auth/api-key.ts'
import { adminUrl, citusNodes } from '../database.ts'
import { request, testConfig } from '../helper.ts'

export const FEED = '/api/v1/events'
export const HOOKS = '/api/v1/webhooks'
export const PG_DUMP = '/usr/lib/postgresql/15/bin/pg_dump'
export const ADMIN_SCOPES: Scope[] = ['contacts:read', 'contacts:write', 'contacts:erase', 'webhooks:manage']

export const DELIVERING = {
  WEBHOOKS_ENABLED: 'true',
  WEBHOOKS_ALLOW_INSECURE: 'true',
  WEBHOOKS_TIMEOUT_MS: '2000',
  WEBHOOKS_RETRY_SCHEDULE: '0,0,0,0,0',
  RATE_LIMIT_MAX: '100000',
}

export interface FeedEvent {
  id: string
  type: string
  occurredAt: string
  data: Record<string, unknown> & { id: string }
}

export interface Received {
  body: string
  headers: Record<string, string>
}

/** A webhook receiver on a free loopback port that takes every delivery (204). */
export async function receiver(t: Test) {
  const received: Received[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ body, headers: req.headers as Record<string, string> })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  t.teardown(() => server.closeAllConnections())
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { url: `http://127.0.0.1:${port}/hook`, received }
}

export { until } from '../wait.ts'

/** Every row of every table of the database, as text, by table. */
export async function everyRow(app: FastifyInstance): Promise<Map<string, string[]>> {
  const tables = await app.db.query<{ name: string }>(
    'test_tables',
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    [],
  )
  const rows = new Map<string, string[]>()
  for (const { name } of tables) {
    const found = await app.db.query<{ row: string }>(`test_rows_${name}`, `SELECT t::text AS row FROM "${name}" t`, [])
    rows.set(
      name,
      found.map(({ row }) => row),
    )
  }
  return rows
}

/** Where each of `needles` appears (case-insensitively) in any row of any table: `table: row`. */
export async function tracesOf(app: FastifyInstance, needles: string[]): Promise<string[]> {
  const found: string[] = []
  for (const [table, rows] of await everyRow(app)) {
    for (const row of rows) {
      const lower = row.toLowerCase()
      for (const needle of needles) if (lower.includes(needle.toLowerCase())) found.push(`${table}: ${needle}`)
    }
  }
  return found
}

/** pg_dump of the test database, of every node on Citus (a coordinator's distributed tables are empty shells). */
export async function dumps(url: string): Promise<string[]> {
  const name = new URL(url).pathname.slice(1)
  const nodes = citusNodes()
  const urls = nodes.length > 0 ? nodes.map((node) => adminUrl(node, name)) : [url]
  const run = promisify(execFile)
  return Promise.all(
    urls.map(async (target) => (await run(PG_DUMP, ['--no-owner', target], { maxBuffer: 256 * 1024 * 1024 })).stdout),
  )
}

/**
 * The tenant's feed from `after`, walked to its end, read once: a change committed before is in it (what a reader
 * waits for is its own tenant's writes alone, docs/decisions/0009-feed-positions-as-data.md).
 */
export function feed(app: FastifyInstance, key: string, after?: string): Promise<{ data: FeedEvent[]; next: string }> {
  return walkFeed(app, key, after)
}

async function walkFeed(app: FastifyInstance, key: string, after?: string) {
  const events: FeedEvent[] = []
  let position = after
  for (;;) {
    const res = await request(app, key, {
      method: 'GET',
      url: `${FEED}?limit=200${position === undefined ? '' : `&after=${position}`}`,
    })
    if (res.statusCode !== 200) throw new Error(`feed: ${res.statusCode} ${res.body}`)
    const page = res.json() as { data: FeedEvent[]; next: string; hasMore: boolean }
    events.push(...page.data)
    position = page.next
    if (!page.hasMore) return { data: events, next: page.next }
  }
}

/** Another instance on the same database, as a second server would be (configured as build() configures). */
export async function anotherInstance(t: Test, app: FastifyInstance, env: Record<string, string> = {}) {
  const instance = await buildApp(testConfig(env), { database: app.db })
  t.teardown(() => instance.close())
  await instance.ready()
  return instance
}

/** A person's data, unlike anything else in the database, so that any trace of it is theirs; `tag`: digits. */
export function person(tag: string) {
  return {
    email: `Zelinda.Quarantotto-${tag}@Esempio-Cancellato.it`,
    firstName: `Zelinda${tag}`,
    lastName: `Quarantotto${tag}`,
    phone: `+39 0471 ${tag.padStart(6, '7')}`,
  }
}

/** The text of each field of `who`, as the database could hold it. */
export const needlesOf = (who: ReturnType<typeof person>) => [who.email, who.firstName, who.lastName, who.phone]
