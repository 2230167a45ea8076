// Fresh, migrated databases for tests. Without TEST_DATABASE_URL: an in-memory PGlite loaded from a migrated
// template (made once per set of migrations and shared by all test files through a file in the temp dir), so a
// file does not pay for initdb and migrations. With TEST_DATABASE_URL: a new PostgreSQL database per call,
// dropped afterwards.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { type Database, openDatabase } from '../src/db/database.ts'
import { defaultMigrationsDir, deployMigrations } from '../src/db/migrate.ts'
import { pgliteSession } from '../src/db/sql-session.ts'

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
    const client = await PGlite.create()
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
    const client = await PGlite.create({ loadDataDir: await pgliteTemplate() })
    const database = await openDatabase({ pglite: client })
    return { database, url: undefined, close: () => database.close() }
  }
  const name = `rubrica_test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: baseUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  await admin.end()
  const url = adminUrl(baseUrl, name)
  const database = await openDatabase({ url, poolSize, connectTimeoutMs })
  await database.withSession((session) => deployMigrations(session))
  return {
    database,
    url,
    async close() {
      await database.close()
      const cleanup = new pg.Client({ connectionString: baseUrl })
      await cleanup.connect()
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await cleanup.end()
    },
  }
}
