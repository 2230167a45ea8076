// The tenant-scoped data access that handlers and hooks use: contacts, and the API-key resolution.
import fp from 'fastify-plugin'
import { ApiKeyRepository } from '../../repositories/api-keys.js'
import { ContactRepository } from '../../repositories/contacts.js'

declare module 'fastify' {
  interface FastifyInstance {
    contacts: ContactRepository
    apiKeys: ApiKeyRepository
  }
}

export default fp(
  async function repositories(fastify) {
    fastify.decorate('contacts', new ContactRepository(fastify.db))
    fastify.decorate(
      'apiKeys',
      new ApiKeyRepository(fastify.db, fastify.config.AUTH_CACHE_TTL_MS, (error) =>
        fastify.log.warn({ err: error }, 'could not record API key use'),
      ),
    )
  },
  { name: 'repositories', dependencies: ['database'] },
)
