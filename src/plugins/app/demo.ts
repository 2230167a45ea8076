// First start on an empty database: the demo organisation, whose key src/server.ts prints once.
import fp from 'fastify-plugin'
import { createDemoIfEmpty } from '../../admin/demo.js'
import type { Database } from '../../db/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The demo key created on this start, when the database was empty (printed once by the server). */
    demo: { tenantId: string; key: string } | null
  }
}

async function hasTenants(db: Database): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>('tenants_any', 'SELECT EXISTS (SELECT 1 FROM tenants) AS found', [])
  return row?.found === true
}

export default fp(
  async function demo(fastify) {
    // A cheap look first: a start on a database that has tenants (every start but the first) stays below Prisma.
    const wanted = fastify.config.DEMO_ON_EMPTY && !(await hasTenants(fastify.db))
    fastify.decorate('demo', wanted ? await createDemoIfEmpty(fastify.db.prisma) : null)
  },
  { name: 'demo', dependencies: ['database'] },
)
