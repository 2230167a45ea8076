// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together. Requests that are not
// authenticated are counted per client address instead, so keys cannot be guessed at full speed. With Redis the
// counters are shared by all instances; while Redis is unreachable each instance counts on its own.
import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { errors } from '../../errors.js'
import { FallbackStore } from './rate-limit-store.js'

export default fp(
  async function tenantRateLimit(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: windowMs } = fastify.config
    const redis = fastify.redis
    // @fastify/rate-limit instantiates the store class itself, without arguments of ours.
    class Store extends FallbackStore {
      constructor() {
        super(redis)
      }
    }
    await fastify.register(rateLimit, { global: false, store: Store })
    // Added as this scope's hook (not per route) so it runs between authentication and authorization.
    fastify.addHook(
      'onRequest',
      fastify.rateLimit({
        max,
        timeWindow: windowMs,
        keyGenerator: (request) => (request.auth ? `tenant:${request.auth.tenantId}` : `address:${request.ip}`),
        onExceeded: (request) => fastify.metrics.countRateLimitRefusal(request.auth ? 'tenant' : 'address'),
        errorResponseBuilder: (_request, context) =>
          errors.rateLimited(max, Math.round(windowMs / 1000), Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
    )
  },
  { name: 'rate-limit', dependencies: ['authentication', 'redis', 'metrics'] },
)
