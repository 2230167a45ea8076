// The database: opened from the configuration (or adopted from the caller, as tests do) and brought up to date
// with the migrations where the configuration asks for it; otherwise a start on a database that is not up to
// date stops here, with what to do.
import type { FastifyBaseLogger } from 'fastify'
import fp from 'fastify-plugin'
import { OperatorError } from '../config/operator-error.js'
import { type Database, databaseOptionsFrom, openDatabase } from './database.js'
import { deployMigrations, failedMigrationsMessage, migrationState } from './migrate.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

export interface DatabasePluginOptions {
  /** An already open, migrated database; the app then neither migrates nor closes it. */
  database?: Database
}

/** Stops a start on a database that is not up to date, with what to do; warns of one that is ahead of it. */
async function checkSchema(db: Database, log: FastifyBaseLogger): Promise<void> {
  const { pending, failed, unknown } = await db.withSession((session) => migrationState(session))
  if (failed.length > 0) throw new OperatorError(failedMigrationsMessage(failed))
  if (pending.length > 0) {
    throw new OperatorError(
      `the database schema is not up to date (${pending.length} migration(s) not applied: ${pending.join(', ')}). ` +
        'Run `npm run db:deploy` (or `npx rubrica db deploy`), or set MIGRATE_ON_START=true.',
    )
  }
  if (unknown.length > 0) {
    log.warn({ migrations: unknown }, 'the database has migrations this version does not know (a newer version?)')
  }
}

export default fp<DatabasePluginOptions>(
  async function database(fastify, options) {
    const config = fastify.config
    const madePrivate = (changed: number) =>
      fastify.log.warn(
        { dataDir: config.DATA_DIR, changed },
        'DATA_DIR files were readable by other users: made private',
      )
    const db = options.database ?? (await openDatabase(databaseOptionsFrom(config, madePrivate)))
    if (!options.database) {
      fastify.addHook('onClose', () => db.close())
      // The embedded database belongs to this process alone, so it is always brought up to date at start;
      // a shared PostgreSQL is migrated by `npm run db:deploy`, or here when MIGRATE_ON_START asks for it.
      if (db.kind === 'pglite' || config.MIGRATE_ON_START) {
        const result = await db.withSession((session) => deployMigrations(session))
        if (result.applied.length > 0) fastify.log.info({ migrations: result.applied }, 'migrations applied')
      } else {
        await checkSchema(db, fastify.log)
      }
    }
    fastify.decorate('db', db)
  },
  { name: 'database' },
)
