// The tenant's own fields' definitions, /api/v1/fields: read with contacts:read; created, changed and deleted with
// fields:manage by an admin. Thin: schemas validate, authorization reads each route's config, the repository
// filters by tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { API_PREFIX } from '../../api-prefix.js'
import { tenantOf } from '../../auth/authorization.js'
import { errors } from '../../errors/catalogue.js'
import { SEARCH_LIMITS } from '../search/model.js'
import { createField, deleteField, getField, getTenantDocument, listFields, updateField } from './route-schemas.js'
import { tenantDocumentCache } from './tenant-document.js'

const read = { scopes: ['contacts:read'], access: 'read' } as const
const manage = { scopes: ['fields:manage'], access: 'manage' } as const

const fields: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/', { config: manage, schema: createField }, async (request, reply) => {
    const created = await fastify.customFields.create(tenantOf(request), request.body)
    return reply.code(201).header('location', `${API_PREFIX}/fields/${created.name}`).send(created)
  })

  fastify.get('/', { config: read, schema: listFields }, async (request) => ({
    data: await fastify.customFields.list(tenantOf(request)),
  }))

  fastify.get('/:name', { config: read, schema: getField }, async (request) => {
    const found = await fastify.customFields.get(tenantOf(request), request.params.name)
    if (found === null) throw errors.fieldNotFound(request.params.name)
    return found
  })

  fastify.patch('/:name', { config: manage, schema: updateField }, async (request) =>
    fastify.customFields.update(tenantOf(request), request.params.name, request.body),
  )

  fastify.delete('/:name', { config: manage, schema: deleteField }, async (request, reply) => {
    if (!(await fastify.customFields.remove(tenantOf(request), request.params.name))) {
      throw errors.fieldNotFound(request.params.name)
    }
    return reply.code(204).send()
  })
}

export default fields

/** GET /api/v1/openapi.json: the document typed for the key's tenant's own fields (tenant-document.ts). */
export const tenantDocumentRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const documentOf = tenantDocumentCache(() => fastify.swagger(), SEARCH_LIMITS.values)
  fastify.get('/openapi.json', { config: read, schema: getTenantDocument }, async (request, reply) => {
    const fields = await fastify.customFieldRegistry.of(tenantOf(request))
    return reply.type('application/json; charset=utf-8').send(documentOf(fields))
  })
}
