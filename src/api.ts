// The /api/v1 scope: every route in it is rate limited, authenticated and authorized (see each plugin), then
// each feature registers its routes. The plugins declare their dependencies, so registering them in another order
// stops the start; a route under /api/v1 registered anywhere else stops it too (src/auth/api-routes.ts).
import type { FastifyInstance } from 'fastify'
import authentication from './auth/authentication.js'
import authorization from './auth/authorization.js'
import batch from './contacts/batch/routes.js'
import contacts from './contacts/routes.js'
import events from './events/routes.js'
import rateLimit from './plugins/external/rate-limit.js'
import privacy from './privacy/routes.js'
import webhooks from './webhooks/routes.js'

export default async function apiV1(fastify: FastifyInstance) {
  await fastify.register(rateLimit)
  await fastify.register(authentication)
  await fastify.register(authorization)
  await fastify.register(contacts, { prefix: '/contacts' })
  await fastify.register(batch, { prefix: '/contacts/batch' })
  await fastify.register(privacy, { prefix: '/contacts' })
  await fastify.register(events, { prefix: '/events' })
  await fastify.register(webhooks, { prefix: '/webhooks' })
}
