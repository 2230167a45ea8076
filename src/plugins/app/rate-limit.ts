// RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW for each tenant, all its keys together. Requests that are not
// authenticated are counted per client address instead, so keys cannot be guessed at full speed.
import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { errors } from '../../errors.js'

export default fp(
  async function tenantRateLimit(fastify) {
    const { RATE_LIMIT_MAX: max, RATE_LIMIT_WINDOW: windowMs } = fastify.config
    await fastify.register(rateLimit, { global: false })
    // Added as this scope's hook (not per route) so it runs between authentication and authorization.
    fastify.addHook(
      'onRequest',
      fastify.rateLimit({
        max,
        timeWindow: windowMs,
        keyGenerator: (request) => (request.auth ? `tenant:${request.auth.tenantId}` : `address:${request.ip}`),
        errorResponseBuilder: (_request, context) =>
          errors.rateLimited(max, Math.round(windowMs / 1000), Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
    )
  },
  { name: 'rate-limit', dependencies: ['authentication'] },
)
