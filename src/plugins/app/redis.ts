// Optional Redis (REDIS_URL), for the rate-limit counters that all instances share. Redis being down never fails
// a request: the rate limiter falls back to per-process counters, and the log says so once per outage, not per
// request.
import fp from 'fastify-plugin'
// Loaded only when REDIS_URL is set: most single-instance starts never need the client.
import type { Redis } from 'ioredis'

export interface RedisLink {
  client: Redis
  /** True while the connection is up. */
  readonly available: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    redis: RedisLink | null
  }
}

const REDIS_OPTIONS = {
  // Fail commands at once while disconnected instead of queueing them behind a dead link.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 500,
  lazyConnect: true,
  // Keep trying to reconnect, at most every 2 s.
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
}

export default fp(
  async function redis(fastify) {
    const url = fastify.config.REDIS_URL
    if (!url) {
      fastify.decorate('redis', null)
      return
    }
    const { Redis } = await import('ioredis')
    const client = new Redis(url, REDIS_OPTIONS)
    const link = { client, available: false }
    client.on('ready', () => {
      if (!link.available) fastify.log.info('Redis reachable: rate limits are shared between instances')
      link.available = true
    })
    const down = () => {
      if (link.available) {
        fastify.log.warn('Redis unreachable: rate limits fall back to per-instance counters until it is back')
      }
      link.available = false
    }
    client.on('close', down)
    client.on('error', down)
    fastify.decorate('redis', link)
    fastify.addHook('onClose', async () => {
      client.disconnect()
    })
    await client.connect().catch(() => {
      fastify.log.warn('Redis unreachable at start: rate limits are per instance until it is reachable')
    })
  },
  { name: 'redis' },
)
