// The database: opened from the configuration (or adopted from the caller, as tests do) and, where the
// configuration asks for it, brought up to date with the migrations.
import fp from 'fastify-plugin'
import { type Database, databaseOptionsFrom, openDatabase } from '../../db/database.js'
import { deployMigrations } from '../../db/migrate.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

export interface DatabasePluginOptions {
  /** An already open, migrated database; the app then neither migrates nor closes it. */
  database?: Database
}

export default fp<DatabasePluginOptions>(
  async function database(fastify, options) {
    const config = fastify.config
    const db = options.database ?? (await openDatabase(databaseOptionsFrom(config)))
    if (!options.database) {
      fastify.addHook('onClose', () => db.close())
      // The embedded database belongs to this process alone, so it is always brought up to date at start;
      // a shared PostgreSQL is migrated by `npm run db:deploy`, or here when MIGRATE_ON_START asks for it.
      if (db.kind === 'pglite' || config.MIGRATE_ON_START) {
        const result = await db.withSession((session) => deployMigrations(session))
        if (result.applied.length > 0) fastify.log.info({ migrations: result.applied }, 'migrations applied')
      }
    }
    fastify.decorate('db', db)
  },
  { name: 'database' },
)
