// The migration runner: first deploy, idempotence, checksums, a failing migration, a modified one, and (on
// PostgreSQL) concurrent deploys.
import { createHash } from 'node:crypto'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import t, { type Test } from 'tap'
import { PGLITE_EXTENSIONS } from '../../src/db/database.ts'
import { defaultMigrationsDir, deployMigrations, MigrationError, PRISMA_MIGRATE_LOCK_ID } from '../../src/db/migrate.ts'
import { pgliteSession, pgSession, type SqlSession } from '../../src/db/sql-session.ts'
import { adminUrl, createTestDatabase } from '../database.ts'

const migrationNames = (await readdir(defaultMigrationsDir, { withFileTypes: true }))
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()

interface MigrationRow {
  migration_name: string
  checksum: string
  finished_at: Date | null
  logs: string | null
  applied_steps_count: number
}

const migrationRows = (session: SqlSession) =>
  session.query<MigrationRow>(
    'SELECT migration_name, checksum, finished_at, logs, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
  )

const tableExists = async (session: SqlSession, name: string) =>
  (await session.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [name]))[0]?.found != null

/** A copy of the real migrations in a temporary directory, to add to or alter. */
async function copyOfMigrations(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rubrica-migrations-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp(defaultMigrationsDir, dir, { recursive: true })
  return dir
}

async function addMigration(dir: string, name: string, script: string): Promise<void> {
  await mkdir(join(dir, name))
  await writeFile(join(dir, name, 'migration.sql'), script)
}

/** The error a deploy fails with: always a MigrationError, whose message an operator reads. */
async function deployFailure(t: Test, session: SqlSession, dir: string): Promise<string> {
  const error = await deployMigrations(session, dir).then(
    () => null,
    (reason: unknown) => reason,
  )
  t.type(error, MigrationError, 'fails with a MigrationError')
  return error instanceof Error ? error.message : ''
}

async function checkFreshDeploy(t: Test, session: SqlSession): Promise<void> {
  t.notOk(await tableExists(session, '_prisma_migrations'), 'the database starts empty')
  const first = await deployMigrations(session)
  t.same(first, { applied: migrationNames, alreadyApplied: 0 }, 'every migration applied, in order')
  for (const table of ['tenants', 'api_keys', 'tags', 'contacts', 'contact_tags']) {
    t.ok(await tableExists(session, table), `table ${table} exists`)
  }

  const rows = await migrationRows(session)
  t.equal(rows.length, migrationNames.length)
  for (const row of rows) {
    const bytes = await readFile(join(defaultMigrationsDir, row.migration_name, 'migration.sql'))
    t.equal(row.checksum, createHash('sha256').update(bytes).digest('hex'), `${row.migration_name}: sha256 checksum`)
    t.not(row.finished_at, null, `${row.migration_name}: finished`)
    t.equal(row.applied_steps_count, 1)
  }

  const second = await deployMigrations(session)
  t.same(second, { applied: [], alreadyApplied: migrationNames.length }, 'a second deploy applies nothing')
  t.same(await migrationRows(session), rows, 'and records nothing')
}

t.test('a fresh embedded database', async (t) => {
  const client = new PGlite({ extensions: PGLITE_EXTENSIONS })
  t.teardown(() => client.close())
  await checkFreshDeploy(t, pgliteSession(client))
})

t.test('a failing migration is recorded as failed, rolled back, and blocks later deploys', async (t) => {
  const { database, close } = await createTestDatabase()
  t.teardown(close)
  const dir = await copyOfMigrations(t)
  // Partial work first, then an error: the table must not survive the failure.
  await addMigration(dir, 'zzz_broken', 'CREATE TABLE "half_done" (id int);\nSELECT 1 / 0;\n')

  await database.withSession(async (session) => {
    t.equal(await deployFailure(t, session, dir), 'Migration zzz_broken failed: division by zero')
    const broken = (await migrationRows(session)).find((row) => row.migration_name === 'zzz_broken')
    t.match(broken, { finished_at: null, applied_steps_count: 0, logs: /division by zero/ }, 'not finished, with logs')
    t.notOk(await tableExists(session, 'half_done'), 'its partial changes were rolled back')

    for (const migrations of [dir, defaultMigrationsDir]) {
      t.match(
        await deployFailure(t, session, migrations),
        /^migration zzz_broken failed earlier and blocks new ones \(Prisma P3009\): fix the database/,
      )
    }
    t.equal((await migrationRows(session)).length, migrationNames.length + 1, 'the blocked deploys recorded nothing')
  })
})

t.test('an applied migration that was modified is refused', async (t) => {
  const { database, close } = await createTestDatabase()
  t.teardown(close)
  const dir = await copyOfMigrations(t)
  const [first] = migrationNames
  if (!first) throw new Error('no migration')
  const file = join(dir, first, 'migration.sql')
  await writeFile(file, `${await readFile(file, 'utf8')}\n-- edited after it was applied\n`)
  await addMigration(dir, 'zzz_later', 'CREATE TABLE "later" (id int);\n')

  await database.withSession(async (session) => {
    const before = await migrationRows(session)
    t.equal(
      await deployFailure(t, session, dir),
      `Migration ${first} was modified after it was applied (checksum mismatch).`,
    )
    t.same(await migrationRows(session), before, 'nothing recorded')
    t.notOk(await tableExists(session, 'later'), 'no later migration applied')
  })
})

if (process.env.TEST_DATABASE_URL) {
  const baseUrl = process.env.TEST_DATABASE_URL

  /** An empty PostgreSQL database (no migrations), dropped when the test ends. */
  const emptyPostgres = async (t: Test): Promise<string> => {
    const name = `rubrica_empty_${process.pid}_${Math.random().toString(16).slice(2, 10)}`
    const admin = new pg.Client({ connectionString: baseUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE "${name}"`)
    await admin.end()
    t.teardown(async () => {
      const cleanup = new pg.Client({ connectionString: baseUrl })
      await cleanup.connect()
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await cleanup.end()
    })
    return adminUrl(baseUrl, name)
  }

  const connect = async (t: Test, url: string): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    return client
  }

  t.test('a fresh PostgreSQL database', async (t) => {
    const client = await connect(t, await emptyPostgres(t))
    await checkFreshDeploy(t, pgSession(client))
  })

  t.test('concurrent deploys on PostgreSQL serialise', async (t) => {
    const url = await emptyPostgres(t)
    const dir = await copyOfMigrations(t)
    // A slow migration widens the window in which unserialised deploys would collide.
    await addMigration(dir, 'zzz_slow', 'SELECT pg_sleep(0.3);\nCREATE TABLE "slow_done" (id int);\n')
    const clients = await Promise.all([1, 2, 3].map(() => connect(t, url)))
    const results = await Promise.all(clients.map((client) => deployMigrations(pgSession(client), dir)))

    const everyName = [...migrationNames, 'zzz_slow']
    t.same(results.flatMap((r) => r.applied).sort(), everyName, 'each migration applied by exactly one deploy')
    t.same(
      results.map((r) => r.applied.length + r.alreadyApplied),
      [everyName.length, everyName.length, everyName.length],
      'every deploy saw every migration',
    )
    const [firstClient] = clients
    if (!firstClient) throw new Error('no client')
    const session = pgSession(firstClient)
    const rows = await migrationRows(session)
    t.same(
      rows.map((row) => row.migration_name),
      everyName,
      'one row per migration',
    )
    t.ok(
      rows.every((row) => row.finished_at !== null),
      'all finished',
    )
    // This database's migration lock only: other tests' databases on the same server take it too.
    const locks = await session.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND objid = $1::bigint::oid
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [PRISMA_MIGRATE_LOCK_ID],
    )
    t.equal(locks[0]?.count, 0, 'the migration lock was released')
  })
}
