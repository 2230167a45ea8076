// The webhooks feature: its schemas, tag and outgoing requests in the document, the repository, this instance's
// deliverer (delivery.ts) and the routes under /api/v1/webhooks.
import type { LookupFunction } from 'node:net'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import delivery from './delivery.js'
import { webhookSchemas } from './model.js'
import { outgoingWebhooks } from './outgoing.js'
import { webhooksRepository } from './repository.js'
import routes from './routes.js'
import { type Resolve, systemResolve } from './urls.js'

export interface WebhookHostResolution {
  /** How registration resolves a URL's host (tests stub it). */
  resolve?: Resolve
  /** How deliveries resolve it when they connect (tests stub it). */
  lookup?: LookupFunction
}

/** The webhooks' member of the options every feature's plugin receives (src/features.ts). */
export interface WebhookPluginOptions {
  webhooks?: WebhookHostResolution
}

declare module 'fastify' {
  interface FastifyInstance {
    /** How a webhook URL's host is resolved when it is registered. */
    resolveWebhookHost: Resolve
  }
}

// Typed as an async plugin (fp<Options> alone would type it as a callback one), as src/features.ts lists them.
const webhooks: FastifyPluginAsync<WebhookPluginOptions> = async function webhooks(fastify, options) {
  const hosts = options.webhooks ?? {}
  for (const schema of webhookSchemas) fastify.addSchema(schema)
  fastify.openapiSections.addTag({
    name: 'webhooks',
    description: 'Gli stessi eventi, consegnati a un indirizzo dell’integrazione',
  })
  fastify.openapiSections.addWebhooks(outgoingWebhooks)
  await fastify.register(webhooksRepository)
  fastify.decorate('resolveWebhookHost', hosts.resolve ?? systemResolve)
  await fastify.register(delivery, { lookup: hosts.lookup })
  fastify.apiRoutes.add(routes, { prefix: '/webhooks' })
}

export default fp(webhooks, {
  name: 'webhooks',
  dependencies: ['database', 'secret-key', 'api-routes', 'openapi-sections'],
})
