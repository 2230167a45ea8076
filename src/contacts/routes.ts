// Contacts endpoints. Thin by design: schemas validate and serialize (src/contacts/route-schemas.ts), hooks
// authorize from each route's config, the repository filters by tenant; conditional requests compare ETags
// (entity-tags.ts) and a POST with an Idempotency-Key runs once (src/idempotency/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { API_PREFIX } from '../api-prefix.js'
import { tenantOf } from '../auth/authorization.js'
import type { Query } from '../db/database.js'
import { errors } from '../errors/catalogue.js'
import { answerOnce } from '../idempotency/plugin.js'
import type { StoredAnswer } from '../idempotency/repository.js'
import { etagOf, isCurrent, versionsOf } from './entity-tags.js'
import type { ContactCreate } from './model.js'
import { createContact, getContact, listContacts, updateContact } from './route-schemas.js'

const read = { scopes: ['contacts:read'], access: 'read' } as const
const write = { scopes: ['contacts:write'], access: 'write' } as const

/**
 * A create's answer, as an Idempotency-Key stores it: the body as the route's schema serializes it. A refusal
 * (unknown tags, a taken or erased email) is thrown: it changed nothing, so nothing is stored and a retry executes again.
 */
async function create(request: FastifyRequest, reply: FastifyReply, input: ContactCreate, query?: Query) {
  const result = await request.server.contacts.create(tenantOf(request), input, query)
  if (result.kind === 'unknown_tags') throw errors.unknownTags(result.names)
  if (result.kind === 'refused_fields') throw result.error
  if (result.kind === 'conflict') throw errors.conflict(result.existing)
  if (result.kind === 'erased') throw errors.contactErased()
  if (result.kind === 'unverifiable') throw errors.erasedCheckUnavailable()
  const headers = { location: `${API_PREFIX}/contacts/${result.contact.id}`, etag: etagOf(result.contact.version) }
  // The route's own serializer for a 201 (fast-json-stringify), as if the contact were sent.
  const body = String(reply.serializeInput(result.contact, '201', 'application/json'))
  return { status: 201, headers, body, contactIds: [result.contact.id] } satisfies StoredAnswer
}

/**
 * Checks a write's `fields` against the tenant's own fields before the handler runs (preHandler: after the route's
 * schema), with the validators compiled for the tenant (src/contacts/custom-fields/registry.ts).
 */
function checkFields(mode: 'create' | 'patch') {
  return async (request: FastifyRequest) => {
    const values = (request.body as { fields?: Record<string, unknown> } | undefined)?.fields
    if (values === undefined || Object.keys(values).length === 0) return
    const wrong = await request.server.customFieldRegistry.check(tenantOf(request), values, mode)
    if (wrong) throw wrong
  }
}

const contacts: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { config: read, schema: listContacts }, async (request) =>
    fastify.contacts.list(tenantOf(request), request.query),
  )

  fastify.get('/:id', { config: read, schema: getContact }, async (request, reply) => {
    const found = await fastify.contacts.get(tenantOf(request), request.params.id)
    if (found === null) throw errors.notFound()
    reply.header('etag', etagOf(found.version))
    if (isCurrent(request.headers['if-none-match'], found.version)) return reply.code(304).send()
    return found
  })

  fastify.post(
    '/',
    { config: write, schema: createContact, preHandler: checkFields('create') },
    async (request, reply) => answerOnce(request, reply, (query) => create(request, reply, request.body, query)),
  )

  fastify.patch(
    '/:id',
    { config: write, schema: updateContact, preHandler: checkFields('patch') },
    async (request, reply) => {
      const expected = versionsOf(request.headers['if-match'])
      const result = await fastify.contacts.update(tenantOf(request), request.params.id, request.body, expected)
      if (result.kind === 'not_found') throw errors.notFound()
      if (result.kind === 'precondition_failed') throw errors.preconditionFailed()
      if (result.kind === 'refused_fields') throw result.error
      return reply.header('etag', etagOf(result.contact.version)).send(result.contact)
    },
  )
}

export default contacts
