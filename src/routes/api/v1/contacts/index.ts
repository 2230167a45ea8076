// Contacts endpoints. Thin by design: schemas validate (src/schemas/operations.ts), hooks authorize from each
// route's config, the repository filters by tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errors } from '../../../../errors.js'
import { createContact, getContact, listContacts, updateContact } from '../../../../schemas/operations.js'

function tenantOf(request: FastifyRequest): string {
  // The authorization hook has refused every request without a resolved key before any handler runs.
  if (request.auth === null) throw errors.missingAuthorization()
  return request.auth.tenantId
}

const read = { scope: 'contacts:read', access: 'read' } as const
const write = { scope: 'contacts:write', access: 'write' } as const

const contacts: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { config: read, schema: listContacts }, async (request) =>
    fastify.contacts.list(tenantOf(request), request.query),
  )

  fastify.get('/:id', { config: read, schema: getContact }, async (request) => {
    const contact = await fastify.contacts.get(tenantOf(request), request.params.id)
    if (contact === null) throw errors.notFound()
    return contact
  })

  fastify.post('/', { config: write, schema: createContact }, async (request, reply) => {
    const result = await fastify.contacts.create(tenantOf(request), request.body)
    if (result.kind === 'unknown_tags') throw errors.unknownTags(result.names)
    if (result.kind === 'conflict') throw errors.conflict(result.existing)
    return reply.code(201).header('location', `/api/v1/contacts/${result.contact.id}`).send(result.contact)
  })

  fastify.patch('/:id', { config: write, schema: updateContact }, async (request) => {
    const contact = await fastify.contacts.update(tenantOf(request), request.params.id, request.body)
    if (contact === null) throw errors.notFound()
    return contact
  })
}

export default contacts
