// Contacts endpoints. Thin by design: schemas validate, hooks authorize, the repository filters by tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errors } from '../../../../errors.js'
import {
  ContactCreateSchema,
  ContactListQuerySchema,
  ContactListSchema,
  ContactParamsSchema,
  ContactSchema,
  ContactUpdateSchema,
} from '../../../../schemas/contacts.js'

function tenantOf(request: { auth: { tenantId: string } | null }): string {
  // The authorization hook has refused every request without a resolved key before any handler runs.
  if (request.auth === null) throw errors.missingAuthorization()
  return request.auth.tenantId
}

const contacts: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/',
    {
      config: { scope: 'contacts:read', access: 'read' },
      schema: { querystring: ContactListQuerySchema, response: { 200: Type.Ref(ContactListSchema) } },
    },
    async (request) => fastify.contacts.list(tenantOf(request), request.query),
  )

  fastify.get(
    '/:id',
    {
      config: { scope: 'contacts:read', access: 'read' },
      schema: { params: ContactParamsSchema, response: { 200: Type.Ref(ContactSchema) } },
    },
    async (request) => {
      const contact = await fastify.contacts.get(tenantOf(request), request.params.id)
      if (contact === null) throw errors.notFound()
      return contact
    },
  )

  fastify.post(
    '/',
    {
      config: { scope: 'contacts:write', access: 'write' },
      schema: { body: Type.Ref(ContactCreateSchema), response: { 201: Type.Ref(ContactSchema) } },
    },
    async (request, reply) => {
      const result = await fastify.contacts.create(tenantOf(request), request.body)
      if (result.kind === 'unknown_tags') throw errors.unknownTags(result.names)
      if (result.kind === 'conflict') throw errors.conflict(result.existing)
      return reply.code(201).header('location', `/api/v1/contacts/${result.contact.id}`).send(result.contact)
    },
  )

  fastify.patch(
    '/:id',
    {
      config: { scope: 'contacts:write', access: 'write' },
      schema: {
        params: ContactParamsSchema,
        body: Type.Ref(ContactUpdateSchema),
        response: { 200: Type.Ref(ContactSchema) },
      },
    },
    async (request) => {
      const contact = await fastify.contacts.update(tenantOf(request), request.params.id, request.body)
      if (contact === null) throw errors.notFound()
      return contact
    },
  )
}

export default contacts
