// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together, unless the tenant has a
// limit of its own. Requests that are not
// authenticated are counted per client address instead, so keys cannot be guessed at full speed. A key that
// must be looked up in the database is counted against its address before the lookup (authentication asks), so
// that no number of concurrent guesses gets more lookups than the budget; a key that turns out valid gives that
// count back. Counting runs before the body is read (preParsing, after authentication's onRequest) and before
// authorization refuses, so a refused request is counted too. With Redis the counters are shared by all instances.
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errors } from '../../errors.js'
import { CounterStore, RedisCounters, TENANT_KEY_PREFIX } from './rate-limit-store.js'

export interface RateLimits {
  /** Counts the request against its address ahead of a key lookup; throws the 429 when the budget is gone. */
  reserveAddress(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** Gives back what reserveAddress counted: the key was valid, and valid keys do not spend the address's budget. */
  refundAddress(request: FastifyRequest): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimits
  }
  interface FastifyRequest {
    /** Counted against its address already, by reserveAddress. */
    addressCounted: boolean
  }
}

interface Limit {
  max: number
  timeWindow: number
  remaining: number
  ttlInSeconds: number
  isExceeded: boolean
}

/** The limit headers every counted answer carries, and the 429 when the limit is exceeded. */
function applyLimit(reply: FastifyReply, limit: Limit): void {
  reply.header('x-ratelimit-limit', limit.max)
  reply.header('x-ratelimit-remaining', limit.remaining)
  reply.header('x-ratelimit-reset', limit.ttlInSeconds)
  if (!limit.isExceeded) return
  const retryAfter = Math.max(1, limit.ttlInSeconds)
  reply.header('retry-after', retryAfter)
  throw errors.rateLimited(limit.max, Math.round(limit.timeWindow / 1000), retryAfter)
}

const addressKey = (request: FastifyRequest) => `address:${request.ip}`

export default fp(
  async function tenantRateLimit(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: timeWindow } = fastify.config
    const shared = fastify.redis ? new RedisCounters(fastify.redis) : null
    let counters: CounterStore | undefined
    // @fastify/rate-limit instantiates the store class itself, with its own options only; every limiter then
    // shares that one instance (child returns it), which refunds go to as well.
    class Store extends CounterStore {
      constructor() {
        super(shared)
        counters = this
      }
    }
    await fastify.register(rateLimit, { global: false, store: Store, max, timeWindow })
    const perTenant = fastify.createRateLimit({
      keyGenerator: (request) => `${TENANT_KEY_PREFIX}${request.auth?.tenantId}`,
      // A tenant's own limit, set by operators (`rubrica tenant limit`), or the service's.
      max: (request) => request.auth?.rateLimitMax ?? max,
    })
    const perAddress = fastify.createRateLimit({ keyGenerator: addressKey })
    fastify.decorateRequest('addressCounted', false)

    const count = async (request: FastifyRequest, reply: FastifyReply, by: 'tenant' | 'address') => {
      const limit = await (by === 'tenant' ? perTenant : perAddress)(request)
      if (limit.isAllowed) return
      if (limit.isExceeded) fastify.metrics.countRateLimitRefusal(by)
      applyLimit(reply, limit)
    }

    fastify.decorate('rateLimits', {
      async reserveAddress(request, reply) {
        request.addressCounted = true
        await count(request, reply, 'address')
      },
      async refundAddress(request) {
        request.addressCounted = false
        await counters?.refund(addressKey(request), timeWindow)
      },
    } satisfies RateLimits)

    fastify.addHook('preParsing', async function countRequest(request: FastifyRequest, reply: FastifyReply) {
      if (request.auth) await count(request, reply, 'tenant')
      else if (!request.addressCounted) await count(request, reply, 'address')
    })
  },
  { name: 'rate-limit', dependencies: ['redis', 'metrics'] },
)
