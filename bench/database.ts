// The benches' databases. bench/run.ts's: created (or, with --keep, reused when bench_meta says it holds the same
// seed and the counts match), migrated and seeded with rubrica's admin CLI, then sampled with SQL for the ids, deep
// cursors and tags the wrk scripts use; dropped (or tidied, with --keep) at the end. The other benches' scratch
// databases, dropped when they end.
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { note, root, runCommand, serviceEnv } from './servers.ts'
import { BENCH_EMAIL_DOMAIN, type TenantSample } from './wrk.ts'

/** The PostgreSQL server's maintenance database, where the benches' databases are created and dropped. */
export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface BenchDatabase {
  name: string
  /** The server's maintenance database (BENCH_PG_URL, or BENCH_CITUS_URL's coordinator). */
  adminUrl: string
  url: string
  /** On the Citus coordinator: created and dropped on every node by scripts/citus-cluster.sh. */
  citus: boolean
}

/** What `rubrica seed --json` prints; kept in bench_meta, since the keys are shown only once. */
export interface SeedMeta {
  tenants: { id: string; name: string; key: string }[]
}

/** How many tenants and contacts per tenant the database holds. */
export type SeedShape = { tenants: number; contacts: number }

export function benchDatabase(name: string, citus = false): BenchDatabase {
  const adminUrl = citus ? (process.env.BENCH_CITUS_URL ?? 'postgres://postgres@127.0.0.1:9700/postgres') : PG_URL
  return { name, adminUrl, url: Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString(), citus }
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Runs statements on `url`; the rows of the last. */
export const sql = <Row>(url: string, text: string) =>
  withClient(url, async (client) => (await client.query(text)).rows as Row[])

export async function postgresVersion(db: BenchDatabase): Promise<string> {
  const [row] = await sql<{ server_version: string }>(db.adminUrl, 'SHOW server_version')
  return row?.server_version ?? '?'
}

/** scripts/citus-cluster.sh: creates a database on every node, or drops it from every node. */
function clusterScript(action: 'db' | 'drop', name: string): Promise<string> {
  return runCommand('bash', [resolve(root, 'scripts/citus-cluster.sh'), action, name], serviceEnv(''), 120_000)
}

async function dropDatabase(db: BenchDatabase): Promise<void> {
  if (db.citus) await clusterScript('drop', db.name)
  else await sql(db.adminUrl, `DROP DATABASE IF EXISTS "${db.name}" WITH (FORCE)`)
}

async function createDatabase(db: BenchDatabase): Promise<void> {
  await dropDatabase(db)
  if (db.citus) await clusterScript('db', db.name)
  else await sql(db.adminUrl, `CREATE DATABASE "${db.name}"`)
}

/** A database of the other benches' own on BENCH_PG_URL, empty; `drop` removes it. */
export async function scratchDatabase(bench: string) {
  const db = benchDatabase(`rubrica_bench_${bench}_${process.pid}`)
  await createDatabase(db)
  return { url: db.url, drop: () => dropDatabase(db) }
}

/**
 * Deletes what the POST scenarios created (contacts, and the Idempotency-Keys of scenario g, which are the
 * emails' local parts), so that a kept database keeps its seeded counts.
 */
async function deleteBenchContacts(client: pg.Client): Promise<number> {
  await client.query(`DELETE FROM idempotency_keys WHERE key LIKE 'wrk-%'`)
  const result = await client.query(`DELETE FROM contacts WHERE email_key LIKE $1`, [`wrk-%@${BENCH_EMAIL_DOMAIN}`])
  return result.rowCount ?? 0
}

/**
 * Clears the dead row versions that writes leave (the previous round's POST and PATCH, a kept database's
 * clean-up), before a round's reads are measured. A server with autovacuum off (as on the bench machine) leaves
 * them to the first reader of each page, which prunes it: PostgreSQL CPU that lands on whichever target reads
 * next. No ANALYZE: the column statistics stay as seeded. Within a round, the second target's PATCH still runs over
 * the first one's dead rows; which target goes first alternates by round.
 */
export async function vacuumBenchTables(db: BenchDatabase): Promise<void> {
  await sql(db.url, 'VACUUM contacts, contact_tags, idempotency_keys')
}

/** At the end of the run: with --keep, delete what the POST scenario added; otherwise drop the database. */
export async function releaseDatabase(db: BenchDatabase, keep: boolean): Promise<void> {
  if (keep) {
    await withClient(db.url, deleteBenchContacts).catch((error) => note(`could not clean up: ${error}`))
    note(`--keep: database ${db.name} kept`)
  } else {
    await dropDatabase(db).catch((error) => note(`could not drop ${db.name}: ${error}`))
    note(`dropped database ${db.name}`)
  }
}

/** The seeded keys of a kept database, when it holds exactly the requested tenants and contacts. */
async function reusableSeed(db: BenchDatabase, shape: SeedShape): Promise<SeedMeta | string> {
  const exists = await sql(db.adminUrl, `SELECT 1 FROM pg_database WHERE datname = '${db.name}'`)
  if (exists.length === 0) return 'no bench database yet'
  return withClient(db.url, async (client) => {
    const meta = await client.query('SELECT tenants, contacts, seed FROM bench_meta WHERE id = 1').catch(() => null)
    const row = meta?.rows[0] as (SeedShape & { seed: SeedMeta }) | undefined
    if (!row) return 'the bench database has no bench_meta record'
    if (row.tenants !== shape.tenants || row.contacts !== shape.contacts) {
      return `it was seeded with ${row.tenants} x ${row.contacts}`
    }
    const deleted = await deleteBenchContacts(client)
    if (deleted > 0) note(`deleted ${deleted} contacts left by an earlier POST scenario`)
    const counts = await client.query<{ tenant_id: string; n: string }>(
      'SELECT t.id AS tenant_id, count(c.id) AS n FROM tenants t LEFT JOIN contacts c ON c.tenant_id = t.id GROUP BY t.id',
    )
    const expected = new Set(row.seed.tenants.map((t) => t.id))
    const match =
      counts.rows.length === shape.tenants &&
      counts.rows.every((r) => expected.has(r.tenant_id) && Number(r.n) === shape.contacts)
    return match ? row.seed : 'its counts do not match bench_meta'
  })
}

export interface PreparedDatabase {
  seed: SeedMeta
  /** Reused with --keep rather than seeded by this run. */
  reused: boolean
  seedSeconds: number
}

/** Reuses the database with --keep when it can; otherwise creates, migrates and seeds it afresh. */
export async function prepareDatabase(db: BenchDatabase, shape: SeedShape, keep: boolean): Promise<PreparedDatabase> {
  const cli = (args: string[], timeoutMs: number) =>
    runCommand(process.execPath, ['bin/rubrica.js', ...args, '--json'], serviceEnv(db.url), timeoutMs)
  if (keep) {
    const reusable = await reusableSeed(db, shape)
    if (typeof reusable !== 'string') {
      note(`--keep: reusing ${db.name} (${shape.tenants} x ${shape.contacts}, counts match)`)
      await cli(['db', 'deploy'], 120_000)
      return { seed: reusable, reused: true, seedSeconds: 0 }
    }
    note(`--keep: cannot reuse ${db.name} (${reusable}); seeding it again`)
  }
  await createDatabase(db)
  note(`created database ${db.name}${db.citus ? ' on the Citus cluster' : ''}; deploying migrations`)
  await cli(['db', 'deploy'], 120_000)
  const total = shape.tenants * shape.contacts
  note(`seeding ${shape.tenants} tenant(s) x ${shape.contacts} contacts (${total} rows) with the admin CLI…`)
  const started = performance.now()
  // Measured about 0.2 ms per row on 2 cores; bounded, with room for a busy machine.
  const args = ['seed', '--tenants', String(shape.tenants), '--contacts', String(shape.contacts)]
  const out = await cli(args, 120_000 + total * 3)
  const seedSeconds = (performance.now() - started) / 1000
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'))
  if (!line) throw new Error(`rubrica seed printed no JSON:\n${out}`)
  const seed = { tenants: (JSON.parse(line) as SeedMeta).tenants }
  if (seed.tenants.length !== shape.tenants) throw new Error(`rubrica seed returned ${seed.tenants.length} tenants`)
  note(`seeded in ${seedSeconds.toFixed(1)} s; analysing`)
  // The seed's keys in bench_meta (fake data, throwaway database), for --keep.
  await withClient(db.url, async (client) => {
    await client.query('CREATE TABLE bench_meta (id int PRIMARY KEY, tenants int, contacts int, seed jsonb NOT NULL)')
    await client.query('INSERT INTO bench_meta VALUES (1, $1, $2, $3)', [shape.tenants, shape.contacts, seed])
    await client.query('VACUUM ANALYZE')
  })
  return { seed, reused: false, seedSeconds }
}

const CURSORS_PER_TENANT = 20

/**
 * Per tenant: random contact ids, other ones with their ETags, createdAt cursors about 90% down its live history,
 * its tag names and starts of its first names; `depth` says which rows the first tenant's cursors point at.
 */
export async function sampleTenants(db: BenchDatabase, shape: SeedShape, seed: SeedMeta, oneTenant = false) {
  const unchanged = Math.max(1, Math.min(1000, Math.floor(shape.contacts / 4)))
  const ids = Math.min(shape.contacts - unchanged, Math.max(200, Math.floor(20_000 / shape.tenants)))
  // One tenant's PATCHes (scenario j) get as many ids as all tenants' together, so that they do not wait on
  // each other's row locks more often than the ten tenants' PATCHes do.
  const firstIds = oneTenant ? Math.min(shape.contacts - unchanged, ids * shape.tenants) : ids
  return withClient(db.url, async (client) => {
    const samples: TenantSample[] = []
    let depth = ''
    for (const [i, tenant] of seed.tenants.entries()) {
      const query = async <Row>(text: string, values: unknown[] = []) =>
        (await client.query(text, [tenant.id, ...values])).rows as Row[]
      // One random draw split in two, so that no id is both PATCHed (scenario f) and expected unchanged (h).
      const split = i === 0 ? firstIds : ids
      const drawn = await query<{ id: string; version: number }>(
        'SELECT id, version FROM contacts WHERE tenant_id = $1 ORDER BY random() LIMIT $2',
        [split + unchanged],
      )
      const [live] = await query<{ n: string }>(
        'SELECT count(*) AS n FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL',
      )
      const liveCount = Number(live?.n ?? 0)
      // Row numbers (1 = newest) spread over 89.5%-90.5% of the live history: a cursor at row r returns the
      // page that starts at row r + 1.
      const step = Math.max(1, Math.floor((liveCount * 0.01) / CURSORS_PER_TENANT))
      const first = Math.max(1, Math.floor(liveCount * 0.895))
      const rows = Array.from({ length: CURSORS_PER_TENANT }, (_, n) => Math.min(liveCount, first + n * step))
      const cursors = await query<{ created_at: Date }>(
        `SELECT created_at FROM (
           SELECT created_at, row_number() OVER (ORDER BY created_at DESC) AS rn
           FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL) s
         WHERE rn = ANY($2::bigint[]) ORDER BY rn`,
        [rows],
      )
      const tags = await query<{ name: string }>('SELECT name FROM tags WHERE tenant_id = $1 ORDER BY name')
      const words = await query<{ start: string }>(
        `SELECT DISTINCT left(first_name, 3) AS start FROM contacts
         WHERE tenant_id = $1 AND length(first_name) >= 3 LIMIT 20`,
      )
      if (drawn.length <= split || cursors.length === 0 || tags.length < 3 || words.length === 0) {
        throw new Error(`tenant ${tenant.id} has too few contacts, or no cursors or tags, to sample`)
      }
      samples.push({
        key: tenant.key,
        ids: drawn.slice(0, split).map((r) => r.id),
        deepCursors: cursors.map((r) => r.created_at.toISOString()),
        tags: tags.map((r) => r.name),
        words: words.map((r) => encodeURIComponent(r.start)),
        unchanged: drawn.slice(split).map((r) => ({ id: r.id, etag: `"v${r.version}"` })),
      })
      if (i === 0) depth = `${first}-${rows.at(-1)} of ${liveCount}`
    }
    return { samples, depth }
  })
}
