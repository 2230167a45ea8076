// The contacts feature: its schemas and tag in the document, the conflict's `existing` member of the error
// envelope, the erased addresses' check, the repositories and the routes under /api/v1/contacts (the batch
// import's under /api/v1/contacts/batch), and the tenant's own fields (custom-fields/, under /api/v1/fields).
import fp from 'fastify-plugin'
import { batchSchemas } from './batch/model.js'
import { batchRepository } from './batch/repository.js'
import batchRoutes from './batch/routes.js'
import customFields from './custom-fields/plugin.js'
import { erasedEmailsPlugin } from './erased-emails.js'
import { contactSchemas, ExistingContactSchema } from './model.js'
import { contactsRepository } from './repository.js'
import routes from './routes.js'
import { searchSchemas } from './search/model.js'
import { searchRepository } from './search/repository.js'
import searchRoutes from './search/routes.js'

export default fp(
  async function contacts(fastify) {
    for (const schema of [...contactSchemas, ...batchSchemas, ...searchSchemas]) fastify.addSchema(schema)
    fastify.openapiSections.addTag({ name: 'contacts', description: 'Contatti dell’organizzazione della chiave' })
    fastify.errorDetails.conflict(ExistingContactSchema)
    await fastify.register(customFields)
    await fastify.register(erasedEmailsPlugin)
    await fastify.register(searchRepository)
    await fastify.register(contactsRepository)
    await fastify.register(batchRepository)
    fastify.apiRoutes.add(routes, { prefix: '/contacts' })
    fastify.apiRoutes.add(batchRoutes, { prefix: '/contacts/batch' })
    fastify.apiRoutes.add(searchRoutes, { prefix: '/contacts/search' })
  },
  { name: 'contacts', dependencies: ['database', 'secret-key', 'api-routes', 'openapi-sections', 'error-details'] },
)
