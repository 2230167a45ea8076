// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together. Requests that are not
// authenticated are counted per client address instead, so keys cannot be guessed at full speed; an address
// that has used up that budget is refused before its key is even looked up (authentication asks). Counting runs
// before the body is read (preParsing, after authentication's onRequest) and before authorization refuses, so a
// refused request is counted too. With Redis the counters are shared by all instances.
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errors } from '../../errors.js'
import { CounterStore, RedisCounters, TENANT_KEY_PREFIX } from './rate-limit-store.js'

export interface RateLimits {
  /** Throws the 429 when the request's address has no budget left for refused requests; counts nothing. */
  refuseExhaustedAddress(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits
  }
}

interface Limit {
  max: number
  timeWindow: number
  remaining: number
  ttlInSeconds: number
}

/** The limit headers every counted answer carries, and the 429 when `exceeded`. */
function applyLimit(reply: FastifyReply, limit: Limit, exceeded: boolean): void {
  reply.header('x-ratelimit-limit', limit.max)
  reply.header('x-ratelimit-remaining', limit.remaining)
  reply.header('x-ratelimit-reset', limit.ttlInSeconds)
  if (!exceeded) return
  const retryAfter = Math.max(1, limit.ttlInSeconds)
  reply.header('retry-after', retryAfter)
  throw errors.rateLimited(limit.max, Math.round(limit.timeWindow / 1000), retryAfter)
}

export default fp(
  async function tenantRateLimit(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: timeWindow } = fastify.config
    const shared = fastify.redis ? new RedisCounters(fastify.redis) : null
    // @fastify/rate-limit instantiates the store class itself, with its own options only.
    class Store extends CounterStore {
      constructor() {
        super(shared)
      }
    }
    await fastify.register(rateLimit, { global: false, store: Store, max, timeWindow })
    const perTenant = fastify.createRateLimit({
      keyGenerator: (request) => `${TENANT_KEY_PREFIX}${request.auth?.tenantId}`,
    })
    const perAddress = fastify.createRateLimit({ keyGenerator: (request) => `address:${request.ip}` })

    fastify.decorate('rateLimits', {
      async refuseExhaustedAddress(request, reply) {
        const limit = await perAddress(request, { increment: false })
        if (limit.isAllowed || limit.remaining > 0) return
        fastify.metrics.countRateLimitRefusal('address')
        applyLimit(reply, limit, true)
      },
    } satisfies RateLimits)

    fastify.addHook('preParsing', async function countRequest(request: FastifyRequest, reply: FastifyReply) {
      const counted = request.auth ? 'tenant' : 'address'
      const limit = await (request.auth ? perTenant : perAddress)(request)
      if (limit.isAllowed) return
      if (limit.isExceeded) fastify.metrics.countRateLimitRefusal(counted)
      applyLimit(reply, limit, limit.isExceeded)
    })
  },
  { name: 'rate-limit', dependencies: ['redis', 'metrics'] },
)
