// The search's endpoint, POST /api/v1/contacts/search. Thin: the route validates the search (validation.ts, which
// names the filter at fault), authorization reads the route's config, the repository runs it for the key's tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { tenantOf } from '../../auth/authorization.js'
import { CONTACT_SEARCH_FIELDS } from './model.js'
import { searchContacts } from './route-schemas.js'
import { searchBodyValidator } from './validation.js'

const search: FastifyPluginAsyncTypebox = async (fastify) => {
  const body = searchBodyValidator(fastify.compileValidator, searchContacts.body, CONTACT_SEARCH_FIELDS)
  fastify.post(
    '/',
    {
      config: { scopes: ['contacts:read'], access: 'read' },
      schema: searchContacts,
      validatorCompiler: ({ schema, httpPart }) =>
        httpPart === 'body' ? body : fastify.compileValidator({ schema, httpPart }),
    },
    async (request) => fastify.contactSearch.search(tenantOf(request), request.body),
  )
}

export default search
