// Opens the service's database: PostgreSQL through @prisma/adapter-pg when a URL is given, otherwise the
// embedded PGlite kept in a directory. Both expose the same Prisma client and a single-connection session.
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import lockfile from 'proper-lockfile'
import { PrismaClient } from '../generated/prisma/client.js'
import { pgliteSession, pgSession, type SqlSession } from './sql-session.js'

export type DatabaseKind = 'postgres' | 'pglite'

export interface Database {
  kind: DatabaseKind
  prisma: PrismaClient
  /** Runs work on one dedicated connection (migrations need that for their lock). */
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>
  close(): Promise<void>
}

export type DatabaseOptions =
  | { url: string; poolSize: number }
  /** An embedded database kept in a directory, locked against a second process. */
  | { dataDir: string }
  /** An already open PGlite instance (tests load a migrated template into memory). */
  | { pglite: PGlite }

export class DatabaseLockedError extends Error {}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if ('url' in options) return openPostgres(options.url, options.poolSize)
  if ('pglite' in options) return wrapPglite(options.pglite, async () => {})
  return openPgliteDirectory(options.dataDir)
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  // An idle client's error (database restarted) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) })
  return {
    kind: 'postgres',
    prisma,
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
    withSession: (work) => work(pgliteSession(client)),
    async close() {
      await prisma.$disconnect()
      await client.close()
      await release()
    },
  }
}
