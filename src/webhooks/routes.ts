// Webhooks endpoints, for the tenant's own integrators: scope webhooks:manage (and contacts:read where contacts'
// events are sent or shown), admin role only (the access `manage`). Thin: schemas validate, authorization reads each route's config, the repository filters by tenant.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { API_PREFIX } from '../api-prefix.js'
import { tenantOf } from '../auth/authorization.js'
import { errors } from '../errors/catalogue.js'
import { WEBHOOK_LIMITS } from './model.js'
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks } from './route-schemas.js'
import { refusedUrl } from './urls.js'

/** What webhooks exist and where they point, and removing one: no contact data. */
const manage = { scopes: ['webhooks:manage'], access: 'manage' } as const
/**
 * What sends the tenant's contacts somewhere (registering a webhook, and any future change of its URL or events),
 * or shows the trace of their events (the deliveries log): contacts:read as well, so that webhooks:manage alone
 * never reaches what contacts:read guards.
 */
const manageContactEvents = { scopes: ['webhooks:manage', 'contacts:read'], access: 'manage' } as const

const webhooks: FastifyPluginAsyncTypebox = async (fastify) => {
  const insecure = fastify.config.WEBHOOKS_ALLOW_INSECURE

  fastify.post('/', { config: manageContactEvents, schema: createWebhook }, async (request, reply) => {
    if (fastify.webhooks.box === null) throw errors.webhooksUnavailable()
    const refused = await refusedUrl(request.body.url, insecure, fastify.resolveWebhookHost)
    if (refused !== null) throw errors.invalidWebhookUrl(refused)
    const result = await fastify.webhooks.create(tenantOf(request), request.body)
    if (result.kind === 'too_many') throw errors.tooManyWebhooks(WEBHOOK_LIMITS.perTenant)
    return reply.code(201).header('location', `${API_PREFIX}/webhooks/${result.webhook.id}`).send(result.webhook)
  })

  fastify.get('/', { config: manage, schema: listWebhooks }, async (request) => ({
    data: await fastify.webhooks.list(tenantOf(request)),
  }))

  fastify.get('/:id', { config: manage, schema: getWebhook }, async (request) => {
    const found = await fastify.webhooks.get(tenantOf(request), request.params.id)
    if (found === null) throw errors.notFound()
    return found
  })

  fastify.delete('/:id', { config: manage, schema: deleteWebhook }, async (request, reply) => {
    if (!(await fastify.webhooks.remove(tenantOf(request), request.params.id))) throw errors.notFound()
    return reply.code(204).send()
  })

  fastify.get('/:id/deliveries', { config: manageContactEvents, schema: listDeliveries }, async (request) => {
    const found = await fastify.webhooks.deliveries(tenantOf(request), request.params.id)
    if (found === null) throw errors.notFound()
    return { data: found }
  })
}

export default webhooks
