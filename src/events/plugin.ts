// The event feed: its schemas and tag in the document, the repository (with the purge of old events) and the
// route under /api/v1/events.
import fp from 'fastify-plugin'
import { eventSchemas } from './model.js'
import { eventsRepository } from './repository.js'
import routes from './routes.js'

export default fp(
  async function events(fastify) {
    for (const schema of eventSchemas) fastify.addSchema(schema)
    fastify.openapiSections.addTag({
      name: 'events',
      description: 'I cambiamenti dei contatti, da seguire per restare sincronizzati',
    })
    await fastify.register(eventsRepository)
    fastify.apiRoutes.add(routes, { prefix: '/events' })
  },
  { name: 'events', dependencies: ['database', 'api-routes', 'openapi-sections'] },
)
