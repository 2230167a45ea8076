// Optional Redis (REDIS_URL): one connection for commands (shared rate-limit counters) and one subscribed to
// key and tenant changes announced by the admin CLI. Redis being down never fails a request: the rate limiter
// falls back to per-process counters, and the log says so once per outage, not per request.
import fp from 'fastify-plugin'
// Loaded only when REDIS_URL is set: most single-instance starts never need the client.
import type { Redis } from 'ioredis'
import { AUTH_CHANGES_CHANNEL } from '../../admin/announce.js'

export interface RedisLink {
  client: Redis
  /** True while the command connection is up. */
  readonly available: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    redis: RedisLink | null
  }
}

export function redisOptions() {
  return {
    // Fail commands at once while disconnected instead of queueing them behind a dead link.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 500,
    lazyConnect: true,
    // Keep trying to reconnect, at most every 2 s.
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
  }
}

export default fp(
  async function redis(fastify) {
    const url = fastify.config.REDIS_URL
    if (!url) {
      fastify.decorate('redis', null)
      return
    }
    const { Redis } = await import('ioredis')
    const client = new Redis(url, redisOptions())
    const subscriber = new Redis(url, { ...redisOptions(), enableOfflineQueue: true, commandTimeout: undefined })
    const link = { client, available: false }
    client.on('ready', () => {
      if (!link.available) fastify.log.info('Redis reachable: rate limits are shared between instances')
      link.available = true
      // Announcements sent while this instance was cut off are lost: forget every cached key resolution.
      fastify.apiKeys.invalidateAll()
    })
    const down = () => {
      if (link.available) {
        fastify.log.warn('Redis unreachable: rate limits fall back to per-instance counters until it is back')
      }
      link.available = false
    }
    client.on('close', down)
    client.on('error', down)
    subscriber.on('error', () => {})
    subscriber.on('message', () => fastify.apiKeys.invalidateAll())
    fastify.decorate('redis', link)
    fastify.addHook('onClose', async () => {
      client.disconnect()
      subscriber.disconnect()
    })
    await client.connect().catch(() => {
      fastify.log.warn('Redis unreachable at start: rate limits are per instance until it is reachable')
    })
    // Not awaited: ioredis subscribes once it can connect, and subscribes again after every reconnection.
    subscriber.subscribe(AUTH_CHANGES_CHANNEL).catch(() => {})
  },
  { name: 'redis', dependencies: ['repositories'] },
)
