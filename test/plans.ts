// Query plans for tests that check what a statement reads: EXPLAIN ANALYZE under planner settings of the test's
// choosing, on every node that plans it, and a walk over the plan's nodes.
import type { FastifyInstance } from 'fastify'
import { citusNodes } from './database.ts'

/**
 * The JSON plan of `sql` run with the planner settings `off` turned off, after `first` if given, in a transaction
 * rolled back at the end (what `first` changed is for this statement alone). On Citus the worker plans the
 * statement: the settings go there too.
 */
export async function planUnder(
  app: FastifyInstance,
  off: readonly string[],
  sql: string,
  params: unknown[],
  first?: [string, unknown[]],
): Promise<unknown[]> {
  let plan: unknown[] = []
  const rollBack = new Error('rolled back')
  await app.db
    .transaction(async (query) => {
      if (citusNodes().length > 0) await query('', "SET LOCAL citus.propagate_set_commands = 'local'", [])
      for (const setting of off) await query('', `SET LOCAL ${setting} = off`, [])
      if (first) await query('', ...first)
      const rows = await query<{ 'QUERY PLAN': unknown }>('', `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)
      plan = rows.map((row) => row['QUERY PLAN'])
      throw rollBack
    })
    .catch((error: unknown) => {
      if (error !== rollBack) throw error
    })
  return plan
}

/** Every node of `plan` (a Citus worker's included), each once. */
export function planNodes(plan: unknown): Record<string, unknown>[] {
  if (Array.isArray(plan)) return plan.flatMap(planNodes)
  if (typeof plan !== 'object' || plan === null) return []
  const node = plan as Record<string, unknown>
  const own = 'Node Type' in node ? [node] : []
  return [...own, ...Object.values(node).flatMap(planNodes)]
}
