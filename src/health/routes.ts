// Liveness and readiness for load balancers and orchestrators: no key, no rate limit, not in the API document.
import type { FastifyInstance } from 'fastify'

const DATABASE_CHECK_TIMEOUT_MS = 2000
/** What readiness asks the database. */
export const PROBE_SQL = 'SELECT 1'

async function databaseReachable(fastify: FastifyInstance): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), DATABASE_CHECK_TIMEOUT_MS)
  })
  const probe = fastify.db.query('health_probe', PROBE_SQL, []).then(
    () => true,
    () => false,
  )
  const reachable = await Promise.race([probe, timeout])
  clearTimeout(timer)
  return reachable
}

export default async function health(fastify: FastifyInstance) {
  /** The process is alive and answering. */
  fastify.get('/health', { schema: { hide: true }, exposeHeadRoute: true }, async () => ({ status: 'ok' }))

  /** Ready to serve: the database answers. Redis down is a degradation (per-instance rate limits), not a failure. */
  fastify.get('/ready', { schema: { hide: true }, exposeHeadRoute: true }, async (_request, reply) => {
    const database = (await databaseReachable(fastify)) ? 'up' : 'down'
    const redis = fastify.redis === null ? 'disabled' : fastify.redis.available ? 'up' : 'down'
    const status = database === 'down' ? 'unavailable' : redis === 'down' ? 'degraded' : 'ready'
    return reply.code(database === 'down' ? 503 : 200).send({ status, database, redis })
  })
}
