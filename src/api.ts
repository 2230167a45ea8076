// The /api/v1 scope: every route in it is rate limited, authenticated and authorized (see each plugin), then
// the routes the features added (fastify.apiRoutes.add) are registered. The plugins declare their dependencies,
// so registering them in another order stops the start; a route under /api/v1 registered anywhere else stops it
// too (src/auth/api-routes.ts).
import type { FastifyInstance } from 'fastify'
import authentication from './auth/authentication.js'
import authorization from './auth/authorization.js'
import rateLimit from './rate-limit/plugin.js'

export default async function apiV1(fastify: FastifyInstance) {
  await fastify.register(rateLimit)
  await fastify.register(authentication)
  await fastify.register(authorization)
  for (const { routes, prefix } of fastify.apiRoutes.added()) await fastify.register(routes, { prefix })
}
