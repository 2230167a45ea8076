// The event feed. Thin: the schema validates, authorization reads the route's config, the repository reads the
// tenant's events only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors } from '../errors/catalogue.js'
import { listEvents } from './operations.js'

const events: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { config: { scope: 'contacts:read', access: 'read' }, schema: listEvents }, async (request) => {
    // The authorization hook has refused every request without a resolved key before any handler runs.
    if (request.auth === null) throw errors.missingAuthorization()
    return fastify.events.page(request.auth.tenantId, request.query)
  })
}

export default events
