// Applies prisma/migrations the way `prisma migrate deploy` does, without Prisma's native schema engine (which
// cannot be downloaded on every machine): same folder layout, same `_prisma_migrations` table and checksums,
// same lock, so the native CLI sees the same history.
import { createHash, randomUUID } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { OperatorError } from '../config/operator-error.js'
import type { SqlSession } from './sql-session.js'

/** Works from src/db (tsx) and dist/db (compiled): both sit two levels below the project root. */
export const defaultMigrationsDir = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/** The advisory lock id Prisma's own engine takes, so ours and theirs also exclude each other. */
export const PRISMA_MIGRATE_LOCK_ID = 72707369

export class MigrationError extends OperatorError {}

interface AppliedRow {
  migration_name: string
  checksum: string
  finished_at: Date | null
  rolled_back_at: Date | null
}

export interface DeployResult {
  applied: string[]
  alreadyApplied: number
}

async function readMigrations(dir: string) {
  const entries = await readdir(dir, { withFileTypes: true })
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(dir, name, 'migration.sql'))
      return { name, script: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') }
    }),
  )
}

export interface MigrationState {
  /** Migrations of `dir` the database has not applied, in order. */
  pending: string[]
  /** Migrations that failed halfway and block later ones (Prisma's P3009). */
  failed: string[]
  /** Migrations the database has applied that `dir` does not have: a newer version ran on it. */
  unknown: string[]
}

/**
 * How the database stands against the migrations of `dir`, without changing anything: a start on a database
 * that is not up to date stops with what to do instead of failing on its first request.
 */
export async function migrationState(session: SqlSession, dir = defaultMigrationsDir): Promise<MigrationState> {
  const names = (await readMigrations(dir)).map((migration) => migration.name)
  const [table] = await session.query<{ found: string | null }>(
    `SELECT to_regclass('"_prisma_migrations"')::text AS found`,
  )
  if (!table?.found) return { pending: names, failed: [], unknown: [] }
  const rows = await session.query<AppliedRow>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
  )
  const applied = new Set(rows.filter((r) => r.finished_at !== null).map((r) => r.migration_name))
  return {
    pending: names.filter((name) => !applied.has(name)),
    failed: rows.filter((r) => r.finished_at === null && r.rolled_back_at === null).map((r) => r.migration_name),
    unknown: [...applied].filter((name) => !names.includes(name)),
  }
}

/** The P3009 message, shared by the start check and deploys: what blocks, and what to do. */
export function failedMigrationsMessage(failed: readonly string[]): string {
  return (
    `migration ${failed.join(', ')} failed earlier and blocks new ones (Prisma P3009): fix the database, then ` +
    'mark it with `prisma migrate resolve`, before `npm run db:deploy` can go on.'
  )
}

export async function deployMigrations(session: SqlSession, dir = defaultMigrationsDir): Promise<DeployResult> {
  const migrations = await readMigrations(dir)
  // Concurrent starters (several instances with MIGRATE_ON_START) wait here one after the other.
  await session.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_ID])
  try {
    await session.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`)
    const rows = await session.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    )
    const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null)
    if (failed.length > 0) throw new MigrationError(failedMigrationsMessage(failed.map((r) => r.migration_name)))
    const applied = new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r]))
    const result: DeployResult = { applied: [], alreadyApplied: 0 }
    for (const migration of migrations) {
      const done = applied.get(migration.name)
      if (done) {
        if (done.checksum !== migration.checksum) {
          throw new MigrationError(`Migration ${migration.name} was modified after it was applied (checksum mismatch).`)
        }
        result.alreadyApplied++
        continue
      }
      const id = randomUUID()
      await session.query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)', [
        id,
        migration.checksum,
        migration.name,
      ])
      try {
        // One transaction per migration: a failing script leaves no half-applied schema behind.
        await session.exec('BEGIN')
        await session.exec(migration.script)
        await session.exec('COMMIT')
      } catch (error) {
        await session.exec('ROLLBACK')
        const message = error instanceof Error ? error.message : String(error)
        await session.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message])
        throw new MigrationError(`Migration ${migration.name} failed: ${message}`)
      }
      await session.query(
        'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
        [id],
      )
      result.applied.push(migration.name)
    }
    return result
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_ID])
  }
}
