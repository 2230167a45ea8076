// What every feature that keeps rows for a while shares: purging them every ten minutes on every instance (a
// purge that races another instance's is harmless), batch by batch so that no statement holds locks for long.
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

/**
 * Runs a purge statement until it deletes less than a batch; returns how many rows went. The statement takes
 * `params` and then the batch size, and answers one row `{ deleted }`.
 */
export async function purgeInBatches(db: Database, name: string, sql: string, params: unknown[]): Promise<number> {
  let total = 0
  for (;;) {
    const [row] = await db.query<{ deleted: number }>(name, sql, [...params, PURGE_BATCH])
    const deleted = row?.deleted ?? 0
    total += deleted
    if (deleted < PURGE_BATCH) return total
  }
}
