// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together, unless the tenant has a
// limit of its own. Requests that are not authenticated are counted per client address instead, so keys cannot
// be guessed at full speed. A key that must be looked up in the database is counted against its address before
// the lookup (authentication asks), so that no number of concurrent guesses gets more lookups than the budget; a
// key that turns out valid gives that count back. Counting runs before the body is read (preParsing, after
// authentication's onRequest) and before authorization refuses, so a refused request is counted too. With Redis
// the counters are shared by all instances. Counted here rather than through @fastify/rate-limit, whose
// promises per request showed in a GET's instruction count (docs/BENCHMARKS.md); the counters were already this
// service's own (rate-limit-store.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { type ApiError, errors } from '../../errors.js'
import { type Count, CounterStore, RedisCounters, TENANT_KEY_PREFIX } from './rate-limit-store.js'

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

/** What a request is counted against: its tenant when authenticated, its client address otherwise. */
interface Subject {
  by: 'tenant' | 'address'
  key: string
  max: number
}

const addressKey = (request: FastifyRequest) => `address:${request.ip}`

export default fp(
  async function tenantRateLimit(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: timeWindow } = fastify.config
    const counters = new CounterStore(fastify.redis ? new RedisCounters(fastify.redis) : null)
    fastify.decorateRequest('addressCounted', false)

    const addressOf = (request: FastifyRequest): Subject => ({ by: 'address', key: addressKey(request), max })
    const subjectOf = (request: FastifyRequest): Subject =>
      request.auth
        ? // A tenant's own limit, set by operators (`rubrica tenant limit`), or the service's.
          { by: 'tenant', key: `${TENANT_KEY_PREFIX}${request.auth.tenantId}`, max: request.auth.rateLimitMax ?? max }
        : addressOf(request)

    /** Sets the limit headers every counted answer carries; returns the 429 when the count is over the limit. */
    const verdict = (reply: FastifyReply, subject: Subject, count: Count): ApiError | undefined => {
      const resetSeconds = Math.ceil(count.ttl / 1000)
      reply.header('x-ratelimit-limit', subject.max)
      reply.header('x-ratelimit-remaining', Math.max(0, subject.max - count.current))
      reply.header('x-ratelimit-reset', resetSeconds)
      if (count.current <= subject.max) return undefined
      fastify.metrics.countRateLimitRefusal(subject.by)
      const retryAfter = Math.max(1, resetSeconds)
      reply.header('retry-after', retryAfter)
      return errors.rateLimited(subject.max, Math.round(timeWindow / 1000), retryAfter)
    }

    fastify.decorate('rateLimits', {
      async reserveAddress(request, reply) {
        request.addressCounted = true
        const subject = addressOf(request)
        const refusal = verdict(reply, subject, await counters.incr(subject.key, timeWindow))
        if (refusal) throw refusal
      },
      async refundAddress(request) {
        request.addressCounted = false
        await counters.refund(addressKey(request), timeWindow)
      },
    } satisfies RateLimits)

    // Callback style, and no promise when counting in process memory: this hook runs on every request.
    fastify.addHook('preParsing', function countRequest(request, reply, payload, done) {
      // Counted against its address already, ahead of a key lookup that resolved no key.
      if (!request.auth && request.addressCounted) return done(null, payload)
      const subject = subjectOf(request)
      const settle = (count: Count) => {
        let refusal: ApiError | undefined
        try {
          refusal = verdict(reply, subject, count)
        } catch (error) {
          // Outside Fastify's hook runner (after Redis answered) a throw would be lost: the request gets a 500.
          return done(error as Error)
        }
        done(refusal, payload)
      }
      const counted = counters.incr(subject.key, timeWindow)
      if (counted instanceof Promise) counted.then(settle, (error: Error) => done(error))
      else settle(counted)
    })
  },
  { name: 'rate-limit', dependencies: ['redis', 'metrics'] },
)
