// The webhooks feature: its schemas, tag and outgoing requests in the document, the repository, this instance's
// deliverer (delivery.ts) and the routes under /api/v1/webhooks.
import type { LookupFunction } from 'node:net'
import fp from 'fastify-plugin'
import delivery from './delivery.js'
import { webhookSchemas } from './model.js'
import { outgoingWebhooks } from './outgoing.js'
import { webhooksRepository } from './repository.js'
import routes from './routes.js'
import { type Resolve, systemResolve } from './urls.js'

export interface WebhookPluginOptions {
  /** How registration resolves a URL's host (tests stub it). */
  resolve?: Resolve
  /** How deliveries resolve it when they connect (tests stub it). */
  lookup?: LookupFunction
}

declare module 'fastify' {
  interface FastifyInstance {
    /** How a webhook URL's host is resolved when it is registered. */
    resolveWebhookHost: Resolve
  }
}

export default fp<WebhookPluginOptions>(
  async function webhooks(fastify, options) {
    for (const schema of webhookSchemas) fastify.addSchema(schema)
    fastify.openapiSections.addTag({
      name: 'webhooks',
      description: 'Gli stessi eventi, consegnati a un indirizzo dell’integrazione',
    })
    fastify.openapiSections.addWebhooks(outgoingWebhooks)
    await fastify.register(webhooksRepository)
    fastify.decorate('resolveWebhookHost', options.resolve ?? systemResolve)
    await fastify.register(delivery, { lookup: options.lookup })
    fastify.apiRoutes.add(routes, { prefix: '/webhooks' })
  },
  { name: 'webhooks', dependencies: ['database', 'secret-key', 'api-routes', 'openapi-sections'] },
)
