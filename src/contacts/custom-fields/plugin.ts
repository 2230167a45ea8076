// The tenant's own fields: their schemas and tag in the document, the registry of each tenant's compiled
// validators, the definitions' repository, the routes under /api/v1/fields and the tenant's own document
// (/api/v1/openapi.json). Registered by the contacts feature,
// whose writes check values against the registry.
import fp from 'fastify-plugin'
import { announceAuthChange, fieldsAnnouncement } from '../../announcements/channel.js'
import { customFieldSchemas } from './model.js'
import { CustomFieldRegistry } from './registry.js'
import { CustomFieldRepository } from './repository.js'
import routes, { tenantDocumentRoutes } from './routes.js'

declare module 'fastify' {
  interface FastifyInstance {
    customFields: CustomFieldRepository
    customFieldRegistry: CustomFieldRegistry
  }
}

export default fp(
  async function customFields(fastify) {
    for (const schema of customFieldSchemas) fastify.addSchema(schema)
    fastify.openapiSections.addTag({
      name: 'fields',
      description: 'I campi propri dell’organizzazione, che ogni contatto può avere in `fields`',
    })
    const registry = new CustomFieldRegistry(fastify.db, fastify.compileValidator, (tenantId, names) => {
      for (const name of names) repository.reclaim(tenantId, name)
    })
    const repository: CustomFieldRepository = new CustomFieldRepository(
      fastify.db,
      async (tenantId) => {
        // This instance at once; the others when they hear it.
        registry.forget(tenantId)
        await announceAuthChange(fastify.db, fieldsAnnouncement(tenantId))
      },
      (error) => fastify.log.error({ err: error }, 'custom fields: reclaiming a deleted field’s values failed'),
    )
    fastify.decorate('customFields', repository)
    fastify.decorate('customFieldRegistry', registry)
    fastify.addHook('onClose', async () => repository.close())
    fastify.apiRoutes.add(routes, { prefix: '/fields' })
    fastify.apiRoutes.add(tenantDocumentRoutes, { prefix: '' })
  },
  { name: 'custom-fields', dependencies: ['database', 'api-routes', 'openapi-sections'] },
)
