// Webhooks on the app: the box of signing secrets, the repository the routes use, and the deliverer of this
// instance (unless WEBHOOKS_ENABLED=false). Without the instance's secrets key (WEBHOOKS_SECRET_KEY on PostgreSQL)
// webhooks cannot be created (src/config/secret-key.ts says so at start).
import type { LookupFunction } from 'node:net'
import fp from 'fastify-plugin'
import { schedulePurge } from '../db/housekeeping.js'
import { Deliverer } from './deliverer.js'
import { WebhookRepository } from './repository.js'
import { SecretBox } from './secrets.js'
import { httpTransport } from './transport.js'
import { type Resolve, systemResolve } from './urls.js'

export interface WebhookPluginOptions {
  /** How registration resolves a URL's host (tests stub it). */
  resolve?: Resolve
  /** How deliveries resolve it when they connect (tests stub it). */
  lookup?: LookupFunction
}

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookRepository
    /** How a webhook URL's host is resolved when it is registered. */
    resolveWebhookHost: Resolve
  }
}

export default fp<WebhookPluginOptions>(
  async function webhooks(fastify, options) {
    const config = fastify.config
    const key = fastify.secretKey
    const box = key === null ? null : new SecretBox(key)
    const repository = new WebhookRepository(fastify.db, box)
    fastify.decorate('webhooks', repository)
    // The deliveries log is kept as long as events, then purged with them (every instance; a race is harmless).
    schedulePurge(fastify, 'old delivery attempts', () => repository.purge(config.EVENTS_RETENTION_DAYS))
    fastify.decorate('resolveWebhookHost', options.resolve ?? systemResolve)
    const transport = httpTransport({ allowInsecure: config.WEBHOOKS_ALLOW_INSECURE, lookup: options.lookup })
    if (config.WEBHOOKS_ENABLED && box !== null) {
      const deliverer = new Deliverer({
        db: fastify.db,
        box,
        send: transport.send,
        log: fastify.log,
        timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
        retrySchedule: config.WEBHOOKS_RETRY_SCHEDULE.split(',').map(Number),
      })
      // A change this instance committed wakes the tenant's webhooks (others find it at their next look).
      fastify.addHook('onResponse', (request, reply, done) => {
        if (request.auth && request.method !== 'GET' && reply.statusCode < 300) deliverer.wake(request.auth.tenantId)
        done()
      })
      fastify.addHook('onReady', async () => deliverer.start())
      fastify.addHook('preClose', async () => deliverer.stop())
    }
    fastify.addHook('onClose', async () => transport.close())
  },
  { name: 'webhooks', dependencies: ['database', 'secret-key'] },
)
