// Opens the service's database: PostgreSQL through @prisma/adapter-pg when a URL is given, otherwise the
// embedded PGlite kept in a directory. Both expose the same Prisma client and a single-connection session.
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import lockfile from 'proper-lockfile'
import type { Config } from '../config.js'
import { PrismaClient } from '../generated/prisma/client.js'
import { pgliteSession, pgSession, type SqlSession } from './sql-session.js'

export type DatabaseKind = 'postgres' | 'pglite'

export interface Database {
  kind: DatabaseKind
  prisma: PrismaClient
  /** Connections of the PostgreSQL pool (for metrics); null on the embedded database. */
  poolStats(): { total: number; idle: number; waiting: number } | null
  /**
   * A statement for the hot paths, below Prisma: the reads, and the API-key bookkeeping that rides on them.
   * On PostgreSQL a named (prepared) statement through the same pool, planned once per connection instead of
   * on every request. Writes of contacts, tags, tenants and keys go through Prisma.
   */
  query<Row>(name: string, sql: string, params: unknown[]): Promise<Row[]>
  /** Runs work on one dedicated connection (migrations need that for their lock). */
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>
  close(): Promise<void>
}

export type DatabaseOptions =
  | { url: string; poolSize: number; connectTimeoutMs?: number }
  /** An embedded database kept in a directory, locked against a second process. */
  | { dataDir: string }
  /** An already open PGlite instance (tests load a migrated template into memory). */
  | { pglite: PGlite }

export class DatabaseLockedError extends Error {}

/** The one reading of the configuration shared by the server and the CLI: a URL wins over DATA_DIR. */
export function databaseOptionsFrom(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_SIZE' | 'DATA_DIR'> &
    Partial<Pick<Config, 'DATABASE_CONNECT_TIMEOUT_MS'>>,
): DatabaseOptions {
  return config.DATABASE_URL
    ? {
        url: config.DATABASE_URL,
        poolSize: config.DATABASE_POOL_SIZE,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      }
    : { dataDir: config.DATA_DIR }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if ('url' in options) return openPostgres(options.url, options.poolSize, options.connectTimeoutMs ?? 5000)
  if ('pglite' in options) return wrapPglite(options.pglite, async () => {})
  return openPgliteDirectory(options.dataDir)
}

function openPostgres(url: string, poolSize: number, connectTimeoutMs: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: connectTimeoutMs })
  // An idle client's error (database restarted) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) })
  return {
    kind: 'postgres',
    prisma,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async query<Row>(name: string, sql: string, params: unknown[]) {
      const result = await pool.query({ name, text: sql, values: params })
      return result.rows as Row[]
    },
    async withSession(work) {
      const client = await pool.connect()
      try {
        return await work(pgSession(client))
      } finally {
        client.release()
      }
    },
    async close() {
      await prisma.$disconnect()
      await pool.end()
    },
  }
}

async function openPgliteDirectory(dataDir: string): Promise<Database> {
  const dir = resolve(dataDir)
  await mkdir(dir, { recursive: true })
  // PGlite is a single-process database: a second process opening the same directory would corrupt it.
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(dir, {
      lockfilePath: join(dir, 'rubrica.lock'),
      stale: 15_000,
      update: 5_000,
      onCompromised: () => {},
    })
  } catch {
    throw new DatabaseLockedError(
      `The embedded database in ${dir} is in use by another rubrica process (the server?). ` +
        'Stop it first, or use PostgreSQL (DATABASE_URL) to run the server and the CLI at the same time.',
    )
  }
  try {
    const client = await PGlite.create({ dataDir: join(dir, 'pgdata') })
    return wrapPglite(client, release)
  } catch (error) {
    await release()
    throw error
  }
}

function wrapPglite(client: PGlite, release: () => Promise<void>): Database {
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) })
  return {
    kind: 'pglite',
    prisma,
    poolStats: () => null,
    async query<Row>(_name: string, sql: string, params: unknown[]) {
      return (await client.query<Row>(sql, params)).rows
    },
    withSession: (work) => work(pgliteSession(client)),
    async close() {
      await prisma.$disconnect()
      await client.close()
      await release()
    },
  }
}
