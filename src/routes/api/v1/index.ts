// The /api/v1 scope: every route in it is authenticated, rate limited and authorized, in that order (see each
// plugin). The plugins declare their dependencies, so registering them in another order stops the start.
import type { FastifyInstance } from 'fastify'
import authentication from '../../../plugins/app/authentication.js'
import authorization from '../../../plugins/app/authorization.js'
import rateLimit from '../../../plugins/app/rate-limit.js'
import contacts from './contacts/index.js'

export default async function apiV1(fastify: FastifyInstance) {
  await fastify.register(rateLimit)
  await fastify.register(authentication)
  await fastify.register(authorization)
  await fastify.register(contacts, { prefix: '/contacts' })
}
