// A contact's erasure and export: its schemas in the document, the repository and the routes, under
// /api/v1/contacts beside the contacts' own (tagged contacts, as they are).
import fp from 'fastify-plugin'
import { privacySchemas } from './model.js'
import { privacyRepository } from './repository.js'
import routes from './routes.js'

export default fp(
  async function privacy(fastify) {
    for (const schema of privacySchemas) fastify.addSchema(schema)
    await fastify.register(privacyRepository)
    fastify.apiRoutes.add(routes, { prefix: '/contacts' })
  },
  { name: 'privacy', dependencies: ['database', 'erased-emails', 'api-routes'] },
)
