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
import { errorResponses, success } from '../../../../schemas/responses.js'

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
      schema: {
        operationId: 'listContacts',
        summary: 'Elenca i contatti',
        description:
          'Contatti dell’organizzazione, dal più recente per createdAt. Per la pagina successiva si passa `next` come ' +
          '`cursor`; `next` è null sull’ultima pagina. Gli archiviati sono esclusi salvo `includeArchived=true`.',
        tags: ['contacts'],
        security: [{ apiKey: ['contacts:read'] }],
        querystring: ContactListQuerySchema,
        response: { 200: success('Una pagina di contatti', Type.Ref(ContactListSchema)), ...errorResponses.list },
      },
    },
    async (request) => fastify.contacts.list(tenantOf(request), request.query),
  )

  fastify.get(
    '/:id',
    {
      config: { scope: 'contacts:read', access: 'read' },
      schema: {
        operationId: 'getContact',
        summary: 'Legge un contatto',
        description: 'Anche se archiviato. Un id inesistente, di un’altra organizzazione o non UUID dà lo stesso 404.',
        tags: ['contacts'],
        security: [{ apiKey: ['contacts:read'] }],
        params: ContactParamsSchema,
        response: { 200: success('Il contatto', Type.Ref(ContactSchema)), ...errorResponses.read },
      },
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
      schema: {
        operationId: 'createContact',
        summary: 'Crea un contatto',
        description:
          'Valori iniziali: emailStatus active, stage lead, source api, consentType unknown se non indicato, ' +
          'acquiredAt uguale a createdAt. L’email è unica nell’organizzazione senza distinzione di maiuscole. ' +
          'I tag devono esistere già; l’API non ne crea.',
        tags: ['contacts'],
        security: [{ apiKey: ['contacts:write'] }],
        body: Type.Ref(ContactCreateSchema),
        response: {
          201: success('Il contatto creato', Type.Ref(ContactSchema), {
            Location: { type: 'string', description: 'Percorso del nuovo contatto' },
          }),
          ...errorResponses.create,
        },
      },
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
        operationId: 'updateContact',
        summary: 'Modifica un contatto',
        description:
          'Cambia solo i campi presenti; `{}` non cambia nulla. Ogni altro campo (email, phone, tags, archivedAt…) ' +
          'è rifiutato con invalid_body.',
        tags: ['contacts'],
        security: [{ apiKey: ['contacts:write'] }],
        params: ContactParamsSchema,
        body: Type.Ref(ContactUpdateSchema),
        response: { 200: success('Il contatto aggiornato', Type.Ref(ContactSchema)), ...errorResponses.update },
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
