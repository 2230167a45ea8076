// The first start's demo organisation, made once the server listens (src/server.ts calls createIfEmpty), so that
// a start that fails before (port in use, Ctrl-C) leaves no organisation behind whose key was never printed.
// A later start finds a demo key that was printed once and never used, and says how to make another.
import fp from 'fastify-plugin'
import { createDemoIfEmpty, DEMO_KEY_LABEL, DEMO_TENANT_NAME } from './demo.js'

export interface Demo {
  /** On a database without any organisation, makes the demo one; returns its one-time key, or null. */
  createIfEmpty(): Promise<{ tenantId: string; key: string } | null>
  /** The demo organisation whose key has never been used, if any: its key may have been lost. */
  unusedKey(): Promise<{ tenantId: string; hint: string } | null>
}

declare module 'fastify' {
  interface FastifyInstance {
    demo: Demo
  }
}

const ANY_TENANT_SQL = 'SELECT EXISTS (SELECT 1 FROM tenants) AS found'
const UNUSED_DEMO_KEY_SQL = `SELECT k.tenant_id AS "tenantId", k.hint FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
  WHERE t.name = $1 AND k.label = $2 AND k.last_used_at IS NULL AND k.revoked_at IS NULL LIMIT 1`

export default fp(
  async function demo(fastify) {
    const db = fastify.db
    fastify.decorate('demo', {
      async createIfEmpty() {
        // A cheap look first: every start but the first stays below Prisma.
        const [row] = await db.query<{ found: boolean }>('tenants_any', ANY_TENANT_SQL, [])
        return row?.found ? null : createDemoIfEmpty(db.prisma)
      },
      async unusedKey() {
        const [row] = await db.query<{ tenantId: string; hint: string }>('demo_key_unused', UNUSED_DEMO_KEY_SQL, [
          DEMO_TENANT_NAME,
          DEMO_KEY_LABEL,
        ])
        return row ?? null
      },
    } satisfies Demo)
  },
  { name: 'demo', dependencies: ['database'] },
)
