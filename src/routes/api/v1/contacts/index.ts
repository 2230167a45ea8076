// Contacts endpoints. Thin by design: schemas validate (src/schemas/operations.ts), hooks authorize from each
// route's config, the repository filters by tenant; conditional requests compare ETags (src/entity-tags.ts) and
// a POST with an Idempotency-Key runs once (the idempotency plugin).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Query } from '../../../../db/database.js'
import { etagOf, isCurrent, versionsOf } from '../../../../entity-tags.js'
import { type ApiError, errors } from '../../../../errors.js'
import { isRepeated } from '../../../../http-headers.js'
import type { ContactRepository } from '../../../../repositories/contacts.js'
import type { StoredAnswer } from '../../../../repositories/idempotency.js'
import type { ContactCreate } from '../../../../schemas/contacts.js'
import { createContact, getContact, listContacts, updateContact } from '../../../../schemas/operations.js'

function tenantOf(request: FastifyRequest): string {
  // The authorization hook has refused every request without a resolved key before any handler runs.
  if (request.auth === null) throw errors.missingAuthorization()
  return request.auth.tenantId
}

const read = { scope: 'contacts:read', access: 'read' } as const
const write = { scope: 'contacts:write', access: 'write' } as const

/** The answer of a create, as stored for an Idempotency-Key: the body as sent (JSON.stringify, like every answer). */
async function create(
  contacts: ContactRepository,
  tenantId: string,
  input: ContactCreate,
  query?: Query,
): Promise<StoredAnswer> {
  const result = await contacts.create(tenantId, input, query)
  const failed = (error: ApiError) => ({ status: error.statusCode, headers: {}, body: JSON.stringify(error.toBody()) })
  if (result.kind === 'unknown_tags') return failed(errors.unknownTags(result.names))
  if (result.kind === 'conflict') return failed(errors.conflict(result.existing))
  const headers = { location: `/api/v1/contacts/${result.contact.id}`, etag: etagOf(result.version) }
  return { status: 201, headers, body: JSON.stringify(result.contact) }
}

function send(reply: FastifyReply, answer: StoredAnswer & { replayed?: boolean }) {
  if (answer.replayed) reply.header('idempotent-replayed', 'true')
  return reply.code(answer.status).headers(answer.headers).type('application/json; charset=utf-8').send(answer.body)
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
    return found.contact
  })

  fastify.post('/', { config: write, schema: createContact }, async (request, reply) => {
    const tenantId = tenantOf(request)
    const execute = (query?: Query) => create(fastify.contacts, tenantId, request.body, query)
    const key = request.headers['idempotency-key']
    if (isRepeated(request.raw.rawHeaders, 'idempotency-key')) throw errors.repeatedIdempotencyKey()
    return send(
      reply,
      key === undefined ? await execute() : await fastify.idempotency.once(tenantId, key, request.body, execute),
    )
  })

  fastify.patch('/:id', { config: write, schema: updateContact }, async (request, reply) => {
    const expected = versionsOf(request.headers['if-match'])
    const result = await fastify.contacts.update(tenantOf(request), request.params.id, request.body, expected)
    if (result.kind === 'not_found') throw errors.notFound()
    if (result.kind === 'precondition_failed') throw errors.preconditionFailed()
    return reply.header('etag', etagOf(result.version)).send(result.contact)
  })
}

export default contacts
