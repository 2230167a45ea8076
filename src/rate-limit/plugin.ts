// Rate limits through @fastify/rate-limit, with its documented options and store interface, over rubrica's own
// counters (store.ts: Redis shared by every instance while it answers, process memory otherwise).
// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together, unless the tenant has a
// limit of its own; requests that are not authenticated are counted per client address, so that keys cannot be
// guessed at full speed. Registered in the /api/v1 scope, it counts every request there after authentication
// has resolved its key (route-level onRequest hooks run after the scope's) and before authorization refuses,
// so a refused request is counted too.
//
// Authentication meets rate limiting through one interface, `keyLookupBudget.lookup`: a key that no cache knows is
// looked up in the database only after its address was counted, so that no number of concurrent guesses gets
// more lookups than the budget; a key that turns out valid gives that count back (it spends its tenant's budget).
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errors } from '../errors/catalogue.js'
import { CounterStore, RedisCounters, TENANT_KEY_PREFIX } from './store.js'

export interface KeyLookupBudget {
  /**
   * Runs `resolve`, a lookup of an API key no cache knows, counted against the request's client address first:
   * refused with the 429 (and no lookup) when the address has used up its budget, given back when the lookup finds
   * a key or fails. The limit headers are set either way.
   */
  lookup<T>(request: FastifyRequest, reply: FastifyReply, resolve: () => Promise<T | null>): Promise<T | null>
}

declare module 'fastify' {
  interface FastifyInstance {
    keyLookupBudget: KeyLookupBudget
  }
}

const addressKey = (request: FastifyRequest) => `address:${normalizeIP(request.ip)}`

export default fp(
  async function rateLimits(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: timeWindow } = fastify.config
    const windowSeconds = Math.round(timeWindow / 1000)
    const shared = fastify.redis ? new RedisCounters(fastify.redis) : null
    // The plugin makes the store itself, from the class; refunds go to that one instance (child() returns it).
    let counters: CounterStore | undefined
    class Store extends CounterStore {
      constructor() {
        super(shared)
        counters = this
      }
    }
    // Requests counted against their address ahead of a lookup that found no key: not counted a second time.
    const countedBeforeLookup = new WeakSet<FastifyRequest>()
    const refused = (key: string) =>
      fastify.metrics.countRateLimitRefusal(key.startsWith(TENANT_KEY_PREFIX) ? 'tenant' : 'address')

    await fastify.register(rateLimit, {
      store: Store,
      timeWindow,
      hook: 'onRequest',
      keyGenerator: (request) => (request.auth ? `${TENANT_KEY_PREFIX}${request.auth.tenantId}` : addressKey(request)),
      // A tenant's own limit, set by operators (`rubrica tenant limit`), or the service's.
      max: (request) => request.auth?.rateLimitMax ?? max,
      allowList: (request) => countedBeforeLookup.has(request),
      onExceeded: (_request, key) => refused(key),
      errorResponseBuilder: (_request, context) =>
        errors.rateLimited(context.max, windowSeconds, Math.max(1, Math.ceil(context.ttl / 1000))),
    })
    const perAddress = fastify.createRateLimit({ keyGenerator: addressKey, max })

    fastify.decorate('keyLookupBudget', {
      async lookup(request, reply, resolve) {
        const limit = await perAddress(request)
        if (!limit.isAllowed) {
          reply.header('x-ratelimit-limit', limit.max)
          reply.header('x-ratelimit-remaining', limit.remaining)
          reply.header('x-ratelimit-reset', limit.ttlInSeconds)
          if (limit.isExceeded) {
            refused(limit.key)
            const retryAfter = Math.max(1, limit.ttlInSeconds)
            reply.header('retry-after', retryAfter)
            throw errors.rateLimited(limit.max, windowSeconds, retryAfter)
          }
        }
        let found: Awaited<ReturnType<typeof resolve>>
        try {
          found = await resolve()
        } catch (error) {
          // No answer (the database is down): the address is not charged for the service's failure.
          await counters?.refund(limit.key, timeWindow)
          throw error
        }
        if (found === null) countedBeforeLookup.add(request)
        else await counters?.refund(limit.key, timeWindow)
        return found
      },
    } satisfies KeyLookupBudget)
  },
  { name: 'rate-limit', dependencies: ['redis', 'metrics'] },
)
