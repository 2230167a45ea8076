// The bench database: created (or, with --keep, reused when bench_meta says it holds the same seed and the counts
// match), migrated and seeded with rubrica's admin CLI, then sampled with SQL for the ids, deep cursors and tags
// the wrk scripts use; dropped (or tidied, with --keep) at the end.
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import type { BenchOptions } from './options.ts'
import { note } from './output.ts'
import { root, runCommand, serviceEnv } from './servers.ts'
import { BENCH_EMAIL_DOMAIN, type TenantSample } from './wrk.ts'

export interface BenchDatabase {
  name: string
  /** The server's maintenance database (BENCH_PG_URL), where the bench database is created and dropped. */
  adminUrl: string
  url: string
  /** On the Citus coordinator: created and dropped on every node by cluster.sh. */
  citus: boolean
}

/** What `rubrica seed --json` prints; kept in bench_meta, since the keys are shown only once. */
export interface SeedMeta {
  tenants: { id: string; name: string; key: string }[]
}

/** How many tenants and contacts per tenant the database holds. */
type SeedShape = Pick<BenchOptions, 'tenants' | 'contacts'>

export function benchDatabase(name: string, citus = false): BenchDatabase {
  const adminUrl = citus
    ? (process.env.BENCH_CITUS_URL ?? 'postgres://postgres@127.0.0.1:9700/postgres')
    : (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { name, adminUrl, url: url.toString(), citus }
}

/** scripts/citus-cluster.sh: creates a database on every node, or drops it from every node. */
function clusterScript(action: 'db' | 'drop', name: string): Promise<string> {
  return runCommand('bash', [resolve(root, 'scripts/citus-cluster.sh'), action, name], serviceEnv(''), 120_000)
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

export async function postgresVersion(db: BenchDatabase): Promise<string> {
  return withClient(db.adminUrl, async (client) => {
    const result = await client.query<{ server_version: string }>('SHOW server_version')
    return result.rows[0]?.server_version ?? '?'
  })
}

async function databaseExists(db: BenchDatabase): Promise<boolean> {
  return withClient(db.adminUrl, async (client) => {
    const result = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name])
    return result.rowCount === 1
  })
}

async function dropDatabase(db: BenchDatabase): Promise<void> {
  if (db.citus) {
    await clusterScript('drop', db.name)
    return
  }
  await withClient(db.adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${db.name}" WITH (FORCE)`))
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
  await withClient(db.url, (client) => client.query('VACUUM contacts, contact_tags, idempotency_keys'))
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
  if (!(await databaseExists(db))) return 'no bench database yet'
  return withClient(db.url, async (client) => {
    const meta = await client
      .query<{ tenants: number; contacts: number; seed: SeedMeta }>(
        'SELECT tenants, contacts, seed FROM bench_meta WHERE id = 1',
      )
      .catch(() => null)
    const row = meta?.rows[0]
    if (!row) return 'the bench database has no bench_meta record'
    if (row.tenants !== shape.tenants || row.contacts !== shape.contacts) {
      return `it was seeded with ${row.tenants} x ${row.contacts}`
    }
    const deleted = await deleteBenchContacts(client)
    if (deleted > 0) note(`deleted ${deleted} contacts left by an earlier POST scenario`)
    return (await countsMatch(client, shape, row.seed)) ? row.seed : 'its counts do not match bench_meta'
  })
}

async function countsMatch(client: pg.Client, shape: SeedShape, seed: SeedMeta): Promise<boolean> {
  const counts = await client.query<{ tenant_id: string; n: string }>(
    'SELECT tenant_id, count(*) AS n FROM contacts GROUP BY tenant_id',
  )
  const tenantCount = await client.query<{ n: string }>('SELECT count(*) AS n FROM tenants')
  const expected = new Set(seed.tenants.map((t) => t.id))
  return (
    Number(tenantCount.rows[0]?.n) === shape.tenants &&
    counts.rows.length === shape.tenants &&
    counts.rows.every((r) => expected.has(r.tenant_id) && Number(r.n) === shape.contacts)
  )
}

export interface PreparedDatabase {
  seed: SeedMeta
  /** Reused with --keep rather than seeded by this run. */
  reused: boolean
  seedSeconds: number
}

/** Reuses the database with --keep when it can; otherwise creates, migrates and seeds it afresh. */
export async function prepareDatabase(db: BenchDatabase, shape: SeedShape, keep: boolean): Promise<PreparedDatabase> {
  if (keep) {
    const reusable = await reusableSeed(db, shape)
    if (typeof reusable !== 'string') {
      note(`--keep: reusing ${db.name} (${shape.tenants} x ${shape.contacts}, counts match)`)
      await deployMigrations(db)
      return { seed: reusable, reused: true, seedSeconds: 0 }
    }
    note(`--keep: cannot reuse ${db.name} (${reusable}); seeding it again`)
  }
  await dropDatabase(db)
  if (db.citus) await clusterScript('db', db.name)
  else await withClient(db.adminUrl, (client) => client.query(`CREATE DATABASE "${db.name}"`))
  note(`created database ${db.name}${db.citus ? ' on the Citus cluster' : ''}; deploying migrations`)
  await deployMigrations(db)
  const { seed, seedSeconds } = await seedDatabase(db, shape)
  note(`seeded in ${seedSeconds.toFixed(1)} s; analysing`)
  await recordSeed(db, shape, seed)
  return { seed, reused: false, seedSeconds }
}

async function deployMigrations(db: BenchDatabase): Promise<void> {
  await runCommand(process.execPath, ['bin/rubrica.js', 'db', 'deploy', '--json'], serviceEnv(db.url), 120_000)
}

async function seedDatabase(db: BenchDatabase, shape: SeedShape): Promise<{ seed: SeedMeta; seedSeconds: number }> {
  const total = shape.tenants * shape.contacts
  note(`seeding ${shape.tenants} tenant(s) x ${shape.contacts} contacts (${total} rows) with the admin CLI…`)
  const started = performance.now()
  const out = await runCommand(
    process.execPath,
    ['bin/rubrica.js', 'seed', '--tenants', String(shape.tenants), '--contacts', String(shape.contacts), '--json'],
    serviceEnv(db.url),
    120_000 + total * 3, // measured about 0.2 ms per row on 2 cores; bounded, with room for a busy machine
  )
  const seedSeconds = (performance.now() - started) / 1000
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'))
  if (!line) throw new Error(`rubrica seed printed no JSON:\n${out}`)
  const meta = JSON.parse(line) as SeedMeta
  if (meta.tenants.length !== shape.tenants) throw new Error(`rubrica seed returned ${meta.tenants.length} tenants`)
  return { seed: meta, seedSeconds }
}

/** Keeps the seed's keys in bench_meta (fake data, throwaway database) for --keep, and analyses the tables. */
async function recordSeed(db: BenchDatabase, shape: SeedShape, seed: SeedMeta): Promise<void> {
  await withClient(db.url, async (client) => {
    await client.query(
      'CREATE TABLE bench_meta (id int PRIMARY KEY, tenants int NOT NULL, contacts int NOT NULL, seed jsonb NOT NULL)',
    )
    await client.query('INSERT INTO bench_meta VALUES (1, $1, $2, $3)', [
      shape.tenants,
      shape.contacts,
      JSON.stringify({ tenants: seed.tenants }),
    ])
    await client.query('VACUUM ANALYZE')
  })
}

const CURSORS_PER_TENANT = 20

/** How many contacts of each tenant to sample: ids for reads and PATCHes, and as many again left unchanged. */
interface SampleSizes {
  ids: number
  unchanged: number
}

/**
 * Per tenant: random contact ids, other ones with their ETags, createdAt cursors about 90% down its live history,
 * and its tag names; `depth` says which rows the first tenant's cursors point at.
 */
export async function sampleTenants(
  db: BenchDatabase,
  shape: SeedShape,
  seed: SeedMeta,
  oneTenant = false,
): Promise<{ samples: TenantSample[]; depth: string }> {
  const unchanged = Math.max(1, Math.min(1000, Math.floor(shape.contacts / 4)))
  const ids = Math.min(shape.contacts - unchanged, Math.max(200, Math.floor(20_000 / shape.tenants)))
  // One tenant's PATCHes (scenario j) get as many ids as all tenants' together, so that they do not wait on
  // each other's row locks more often than the ten tenants' PATCHes do.
  const firstIds = oneTenant ? Math.min(shape.contacts - unchanged, ids * shape.tenants) : ids
  const sampled = await withClient(db.url, async (client) => {
    const out: { sample: TenantSample; depth: string }[] = []
    for (const [i, tenant] of seed.tenants.entries()) {
      out.push(await sampleTenant(client, tenant, { ids: i === 0 ? firstIds : ids, unchanged }))
    }
    return out
  })
  return { samples: sampled.map((s) => s.sample), depth: sampled[0]?.depth ?? '' }
}

async function sampleTenant(
  client: pg.Client,
  tenant: SeedMeta['tenants'][number],
  sizes: SampleSizes,
): Promise<{ sample: TenantSample; depth: string }> {
  // One random draw split in two, so that no id is both PATCHed (scenario f) and expected unchanged (h).
  const drawn = await client.query<{ id: string; version: number }>(
    'SELECT id, version FROM contacts WHERE tenant_id = $1 ORDER BY random() LIMIT $2',
    [tenant.id, sizes.ids + sizes.unchanged],
  )
  const ids = drawn.rows.slice(0, sizes.ids).map((r) => r.id)
  const unchanged = drawn.rows.slice(sizes.ids).map((r) => ({ id: r.id, etag: `"v${r.version}"` }))
  const live = await client.query<{ n: string }>(
    'SELECT count(*) AS n FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL',
    [tenant.id],
  )
  const liveCount = Number(live.rows[0]?.n ?? 0)
  // Row numbers (1 = newest) spread over 89.5%-90.5% of the live history: a cursor at row r returns the
  // page that starts at row r + 1.
  const step = Math.max(1, Math.floor((liveCount * 0.01) / CURSORS_PER_TENANT))
  const first = Math.max(1, Math.floor(liveCount * 0.895))
  const rows = Array.from({ length: CURSORS_PER_TENANT }, (_, i) => Math.min(liveCount, first + i * step))
  const cursors = await client.query<{ created_at: Date }>(
    `SELECT created_at FROM (
       SELECT created_at, row_number() OVER (ORDER BY created_at DESC) AS rn
       FROM contacts WHERE tenant_id = $1 AND archived_at IS NULL) s
     WHERE rn = ANY($2::bigint[]) ORDER BY rn`,
    [tenant.id, rows],
  )
  const tags = await client.query<{ name: string }>('SELECT name FROM tags WHERE tenant_id = $1 ORDER BY name', [
    tenant.id,
  ])
  const names = await client.query<{ start: string }>(
    'SELECT DISTINCT left(first_name, 3) AS start FROM contacts WHERE tenant_id = $1 AND length(first_name) >= 3 LIMIT 20',
    [tenant.id],
  )
  if (
    ids.length === 0 ||
    unchanged.length === 0 ||
    cursors.rows.length === 0 ||
    tags.rows.length < 3 ||
    names.rows.length === 0
  ) {
    throw new Error(`tenant ${tenant.id} has too few contacts, or no cursors or tags, to sample`)
  }
  const sample = {
    key: tenant.key,
    ids,
    deepCursors: cursors.rows.map((r) => r.created_at.toISOString()),
    tags: tags.rows.map((r) => r.name),
    words: names.rows.map((r) => encodeURIComponent(r.start)),
    unchanged,
  }
  return { sample, depth: `${first}-${rows.at(-1)} of ${liveCount}` }
}
