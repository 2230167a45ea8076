// The event feed. Thin: the schema validates, authorization reads the route's config, the repository reads the
// tenant's events only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { tenantOf } from '../auth/authorization.js'
import { listEvents } from './route-schemas.js'

const events: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { config: { scopes: ['contacts:read'], access: 'read' }, schema: listEvents }, async (request) =>
    fastify.events.page(tenantOf(request), request.query),
  )
}

export default events
