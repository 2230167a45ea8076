// The /api/v1 scope: every route in it is authenticated, rate limited and authorized, in that order (see each
// plugin). The plugins declare their dependencies, so registering them in another order stops the start.
import type { FastifyInstance } from 'fastify'
import authentication from '../../../plugins/app/authentication.js'
import authorization from '../../../plugins/app/authorization.js'
import rateLimit from '../../../plugins/app/rate-limit.js'
import contacts from './contacts/index.js'

export default async function apiV1(fastify: FastifyInstance) {
  // Answers are written with JSON.stringify, not with serialisers compiled from the response schemas: a page
  // built by fast-json-stringify is a string of many small pieces that Node flattens when it writes the socket,
  // about 0.1 ms of CPU per page of 50 (docs/BENCHMARKS.md). The schemas still document every answer. What an
  // answer holds is fixed by the repository's select lists, derived from the same schemas, and the suite checks
  // every answer it receives against the document, unknown fields included (test/contract.ts).
  fastify.setSerializerCompiler(() => JSON.stringify)
  await fastify.register(rateLimit)
  await fastify.register(authentication)
  await fastify.register(authorization)
  await fastify.register(contacts, { prefix: '/contacts' })
}
