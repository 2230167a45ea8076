// A contact's erasure and export, under /api/v1/contacts: what a tenant's administrator does for a person who
// asks (GDPR articles 17, 15 and 20). Admin role only (the access `privacy`); erasing needs the scope
// contacts:erase, which no key holds unless given it. Thin: schemas validate, authorization reads each route's
// config, the repository filters by tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { tenantOf } from '../auth/authorization.js'
import { versionsOf } from '../contacts/entity-tags.js'
import { errors } from '../errors/catalogue.js'
import { eraseContact, exportContact } from './route-schemas.js'

const erase = { scopes: ['contacts:erase'], access: 'privacy' } as const
const exportAll = { scopes: ['contacts:read'], access: 'privacy' } as const

const privacy: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.delete('/:id', { config: erase, schema: eraseContact }, async (request, reply) => {
    if (!fastify.privacy.available) throw errors.erasureUnavailable()
    const keyId = request.auth?.keyId
    if (keyId === undefined) throw errors.missingAuthorization()
    const expected = versionsOf(request.headers['if-match'])
    const erased = await fastify.privacy.erase(tenantOf(request), request.params.id, { source: 'api', keyId }, expected)
    if (erased === 'not_found') throw errors.notFound()
    if (erased === 'precondition_failed') throw errors.preconditionFailed()
    return reply.code(204).send()
  })

  fastify.get('/:id/export', { config: exportAll, schema: exportContact }, async (request) => {
    const found = await fastify.privacy.export(tenantOf(request), request.params.id)
    if (found === null) throw errors.notFound()
    return found
  })
}

export default privacy
