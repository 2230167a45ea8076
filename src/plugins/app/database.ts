// Opens the database (or adopts one given by the caller, as tests do), applies migrations where the
// configuration asks for it, creates the first-start demo, and exposes the tenant-scoped repositories.
import fp from 'fastify-plugin'
import { createDemoIfEmpty } from '../../admin/demo.js'
import type { Config } from '../../config.js'
import { type Database, databaseOptionsFrom, openDatabase } from '../../db/database.js'
import { deployMigrations } from '../../db/migrate.js'
import { ApiKeyRepository } from '../../repositories/api-keys.js'
import { ContactRepository } from '../../repositories/contacts.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    db: Database
    contacts: ContactRepository
    apiKeys: ApiKeyRepository
    /** The demo key created on this start, when the database was empty (printed once by the server). */
    demo: { tenantId: string; key: string } | null
  }
}

export interface DatabasePluginOptions {
  /** An already open, migrated database; the app then neither migrates nor closes it. */
  database?: Database
}

async function hasTenants(db: Database): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>('tenants_any', 'SELECT EXISTS (SELECT 1 FROM tenants) AS found', [])
  return row?.found === true
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
    fastify.decorate('contacts', new ContactRepository(db))
    fastify.decorate(
      'apiKeys',
      new ApiKeyRepository(db, config.AUTH_CACHE_TTL_MS, (error) =>
        fastify.log.warn({ err: error }, 'could not record API key use'),
      ),
    )
    // A cheap look first: a start on a database that has tenants (every start but the first) stays below Prisma.
    const demo = config.DEMO_ON_EMPTY && !(await hasTenants(db)) ? await createDemoIfEmpty(db.prisma) : null
    fastify.decorate('demo', demo)
  },
  { name: 'database' },
)
