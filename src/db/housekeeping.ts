// What every feature that keeps rows for a while shares: purging them every ten minutes on every instance (a
// purge that races another instance's is harmless), tenant by tenant (every statement on a tenant's rows names the
// tenant, so that a distributed PostgreSQL runs it on the tenant's node), batch by batch so that no statement
// holds locks for long.
import type { FastifyInstance } from 'fastify'
import type { Database } from './database.js'

const PURGE_EVERY_MS = 10 * 60_000
const PURGE_BATCH = 10_000

/** Runs `purge` every ten minutes until the app closes; a failure is logged as `could not purge <what>`. */
export function schedulePurge(fastify: FastifyInstance, what: string, purge: () => Promise<unknown>): void {
  const run = () => purge().catch((error: unknown) => fastify.log.warn({ err: error }, `could not purge ${what}`))
  const timer = setInterval(run, PURGE_EVERY_MS).unref()
  fastify.addHook('onClose', async () => clearInterval(timer))
}

export const TENANTS_SQL = 'SELECT id FROM tenants WHERE id > $1 ORDER BY id LIMIT $2'
const TENANTS_PAGE = 1000

/** Every tenant's id, read a page at a time (tenants created meanwhile may or may not be among them). */
export async function* tenantsInTurn(db: Database): AsyncGenerator<string> {
  let after = '00000000-0000-0000-0000-000000000000'
  for (;;) {
    const rows = await db.query<{ id: string }>('housekeeping_tenants', TENANTS_SQL, [after, TENANTS_PAGE])
    for (const row of rows) yield row.id
    const last = rows.at(-1)
    if (rows.length < TENANTS_PAGE || last === undefined) return
    after = last.id
  }
}

/**
 * Runs a purge statement for each tenant until it deletes less than a batch; returns how many rows went. The
 * statement takes the tenant id, then `params`, then the batch size, and answers one row `{ deleted }`.
 */
export async function purgeEachTenant(db: Database, name: string, sql: string, params: unknown[]): Promise<number> {
  let total = 0
  for await (const tenantId of tenantsInTurn(db)) {
    for (;;) {
      const [row] = await db.query<{ deleted: number }>(name, sql, [tenantId, ...params, PURGE_BATCH])
      const deleted = row?.deleted ?? 0
      total += deleted
      if (deleted < PURGE_BATCH) break
    }
  }
  return total
}
