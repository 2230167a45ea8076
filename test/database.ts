// Fresh, migrated databases for tests. Without TEST_DATABASE_URL: an in-memory PGlite loaded from a migrated
// template (made once per set of migrations and shared by all test files through a file in the temp dir), so a
// file does not pay for initdb and migrations. With TEST_DATABASE_URL: a new PostgreSQL database per call,
// dropped afterwards. With TEST_CITUS_WORKERS too (host:port of each worker, comma-separated; TEST_DATABASE_URL
// is then the coordinator's): the database is made on every node of a Citus cluster, copied from a template that
// the migrations distributed once per set of migrations (a fresh distribution costs seconds; a copy does not).
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { type Database, openDatabase, PGLITE_EXTENSIONS } from '../src/db/database.ts'
import { defaultMigrationsDir, deployMigrations } from '../src/db/migrate.ts'
import { pgliteSession, pgSession } from '../src/db/sql-session.ts'

export interface TestDatabase {
  database: Database
  /** A postgres URL when the test runs on PostgreSQL (for child processes such as the CLI). */
  url: string | undefined
  close(): Promise<void>
}

async function migrationsFingerprint(): Promise<string> {
  const hash = createHash('sha256')
  for (const name of (await readdir(defaultMigrationsDir)).sort()) {
    const file = join(defaultMigrationsDir, name, 'migration.sql')
    if (existsSync(file)) hash.update(name).update(await readFile(file))
  }
  return hash.digest('hex').slice(0, 16)
}

async function pgliteTemplate(): Promise<Blob> {
  const path = join(tmpdir(), `rubrica-template-${await migrationsFingerprint()}.tar.gz`)
  if (!existsSync(path)) {
    const client = await PGlite.create({ extensions: PGLITE_EXTENSIONS })
    await deployMigrations(pgliteSession(client))
    const dump = await client.dumpDataDir('gzip')
    await client.close()
    // Test files run in parallel: write aside, then rename, so no reader ever sees half a file.
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
    await rename(partial, path)
  }
  return new Blob([await readFile(path)])
}

export function adminUrl(base: string, database: string): string {
  const url = new URL(base)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * `poolSize`: connections of the PostgreSQL pool (ignored on PGlite, which has one); `connectTimeoutMs`: how long a
 * statement waits for one of them.
 */
export async function createTestDatabase({
  poolSize = 4,
  connectTimeoutMs,
}: {
  poolSize?: number
  connectTimeoutMs?: number
} = {}): Promise<TestDatabase> {
  const baseUrl = process.env.TEST_DATABASE_URL
  if (!baseUrl) {
    const client = await PGlite.create({ loadDataDir: await pgliteTemplate(), extensions: PGLITE_EXTENSIONS })
    const database = await openDatabase({ pglite: client })
    return { database, url: undefined, close: () => database.close() }
  }
  const name = `rubrica_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const nodes = citusNodes(baseUrl)
  if (nodes.length > 0) {
    const template = await citusTemplate(baseUrl, nodes)
    await Promise.all(nodes.map((node) => onNode(node, `CREATE DATABASE "${name}" TEMPLATE "${template}"`)))
  } else {
    await onNode(baseUrl, `CREATE DATABASE "${name}"`)
  }
  const url = adminUrl(baseUrl, name)
  const database = await openDatabase({ url, poolSize, connectTimeoutMs })
  if (nodes.length === 0) await database.withSession((session) => deployMigrations(session))
  const plans = nodes.length > 0 ? recordStatements(database) : null
  return {
    database,
    url,
    async close() {
      // On Citus, every statement rubrica's code ran here must run on one shard: a failure fails the test.
      const refused = plans ? await plans.check().catch((error: unknown) => error) : undefined
      await database.close()
      // The coordinator first: its sessions to the workers end with it.
      for (const node of nodes.length > 0 ? nodes : [baseUrl]) await dropOnNode(node, name)
      if (refused) throw refused
    },
  }
}

interface Recorded {
  name: string
  sql: string
  params: unknown[]
}

/** Statements of this process already checked (the same statement is checked once, whatever test ran it). */
const checkedStatements = new Set<string>()

/** The file under src/ that called `query`, or null when a test did (tests' own SQL is theirs to shape). */
function callerInSource(): string | null {
  const frames = new Error().stack?.split('\n').slice(1) ?? []
  for (const frame of frames) {
    const file = /\((?:file:\/\/)?([^():]+):\d+:\d+\)|at (?:file:\/\/)?([^():]+):\d+:\d+/.exec(frame)
    const path = file?.[1] ?? file?.[2]
    if (!path || path.includes('node_modules') || path.startsWith('node:') || path.endsWith('/test/database.ts'))
      continue
    if (path.includes('/test/')) return null
    if (path.includes('/src/') && !path.includes('/src/db/database.')) return path
  }
  return null
}

/**
 * Records the statements that rubrica's code (src/) runs on `database`, through `query` or a transaction's (its
 * background pool's too), with the values of their first run; `check` has Citus plan each (EXPLAIN, in a
 * transaction rolled back) and throws unless each runs as one task, with no step before it: on one shard, or on
 * one node for a reference table.
 */
function recordStatements(database: Database): { check(): Promise<void> } {
  const recorded = new Map<string, Recorded>()
  const record = (name: string, sql: string, params: unknown[]) => {
    const key = `${name}\u0000${sql}`
    if (!recorded.has(key) && !checkedStatements.has(key) && callerInSource()) recorded.set(key, { name, sql, params })
  }
  for (const statements of [database, database.background]) {
    const query = statements.query.bind(statements)
    statements.query = (name, sql, params) => {
      record(name, sql, params)
      return query(name, sql, params)
    }
    const transaction = statements.transaction.bind(statements)
    statements.transaction = (work) =>
      transaction((inner) =>
        work((name, sql, params) => {
          record(name, sql, params)
          return inner(name, sql, params)
        }),
      )
  }
  return {
    async check() {
      const refused: string[] = []
      await database.withSession(async (session) => {
        for (const [key, { name, sql, params }] of recorded) {
          checkedStatements.add(key)
          // A SET reads no table and has no plan (EXPLAIN refuses it); Citus sends a SET LOCAL to the workers itself.
          if (/^SET\s/i.test(sql)) continue
          await session.query('BEGIN')
          try {
            const plan = (await session.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params))
              .map((row) => row['QUERY PLAN'])
              .join('\n')
            const tasks = [...plan.matchAll(/Task Count: (\d+)/g)].map((match) => Number(match[1]))
            // One task, and no step before it: a subplan's or a pulled INSERT … SELECT's rows go through the
            // coordinator, and to other nodes.
            if (tasks.some((count) => count !== 1) || /Distributed Subplan|method: (pull|repartition)/.test(plan)) {
              refused.push(`${name}: ${tasks.join(', ')} tasks\n${plan}`)
            }
          } finally {
            await session.query('ROLLBACK')
          }
        }
      })
      if (refused.length > 0) throw new Error(`statements that run on more than one shard:\n${refused.join('\n\n')}`)
    },
  }
}

/** Runs one statement on a node's `postgres` database. */
async function onNode(node: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: node })
  await client.connect()
  try {
    return (await client.query(sql, params)).rows
  } finally {
    await client.end()
  }
}

/** Drops a database; on a Citus node, again after a moment if sessions of Citus's own came back meanwhile. */
async function dropOnNode(node: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await onNode(node, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      return
    } catch (error) {
      if (attempt === 5 || (error as { code?: string }).code !== '55006') throw error
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
    }
  }
}

/** The coordinator's URL, then each worker's (TEST_CITUS_WORKERS); none without a Citus cluster. */
export function citusNodes(baseUrl = process.env.TEST_DATABASE_URL): string[] {
  const workers = process.env.TEST_CITUS_WORKERS
  if (!baseUrl || !workers) return []
  return [
    baseUrl,
    ...workers.split(',').map((address) => {
      const url = new URL(baseUrl)
      url.host = address.trim()
      return url.toString()
    }),
  ]
}

/**
 * A database on every node with Citus, the workers registered and the migrations applied (tables distributed, 4
 * shards each: a test needs no more), closed to connections so that it can be copied. Made once per set of
 * migrations; concurrent test processes wait for the first one under an advisory lock on the coordinator.
 */
async function citusTemplate(baseUrl: string, nodes: string[]): Promise<string> {
  const template = `rubrica_citus_template_${await migrationsFingerprint()}`
  const [coordinator] = nodes
  if (!coordinator) throw new Error('no coordinator')
  const lock = new pg.Client({ connectionString: coordinator })
  await lock.connect()
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [template])
    const exists = await lock.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])
    if (exists.rowCount === 0) {
      await Promise.all(nodes.map((node) => dropOnNode(node, template)))
      await makeCitusTemplate(template, baseUrl, nodes).catch(async (error: unknown) => {
        // Left half made (a migration failed), it would be found next time and copied as it is: none is left.
        await Promise.all(nodes.map((node) => dropOnNode(node, template)))
        throw error
      })
    }
  } finally {
    await lock.end()
  }
  return template
}

/** The template's database on every node, Citus's cluster in it, the migrations applied, closed to connections. */
async function makeCitusTemplate(template: string, baseUrl: string, nodes: string[]): Promise<void> {
  const [coordinator, ...workers] = nodes
  if (!coordinator) throw new Error('no coordinator')
  for (const node of nodes) {
    await onNode(node, `CREATE DATABASE "${template}"`)
    await onNode(adminUrl(node, template), 'CREATE EXTENSION citus')
  }
  const session = new pg.Client({ connectionString: adminUrl(baseUrl, template) })
  await session.connect()
  try {
    const { hostname, port } = new URL(coordinator)
    await session.query('SELECT citus_set_coordinator_host($1, $2)', [hostname, Number(port)])
    for (const worker of workers) {
      const address = new URL(worker)
      await session.query('SELECT citus_add_node($1, $2)', [address.hostname, Number(address.port)])
    }
    await session.query('SET citus.shard_count = 4')
    await deployMigrations(pgSession(session))
  } finally {
    await session.end()
  }
  // Closed, and its sessions (Citus's own among them) ended: a database is copied only while nobody is in it.
  for (const node of nodes) {
    await onNode(node, `ALTER DATABASE "${template}" WITH ALLOW_CONNECTIONS false`)
    await onNode(node, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [template])
  }
}
