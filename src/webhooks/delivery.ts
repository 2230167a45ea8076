// This instance's deliverer of webhook requests (unless WEBHOOKS_ENABLED=false, or without the secrets key to
// sign with): it starts once the app is ready, is woken by the changes this instance commits, and stops first
// on close.
import type { LookupFunction } from 'node:net'
import fp from 'fastify-plugin'
import { API_PREFIX } from '../api-prefix.js'
import { Deliverer } from './deliverer.js'
import { httpTransport } from './transport.js'

const WEBHOOK_ROUTES = `${API_PREFIX}/webhooks`

export interface DeliveryOptions {
  /** How deliveries resolve a host when they connect (tests stub it). */
  lookup?: LookupFunction
}

export default fp<DeliveryOptions>(
  async function webhookDelivery(fastify, options) {
    const config = fastify.config
    const box = fastify.webhooks.box
    const transport = httpTransport({ allowInsecure: config.WEBHOOKS_ALLOW_INSECURE, lookup: options.lookup })
    if (config.WEBHOOKS_ENABLED && box !== null) {
      const deliverer = new Deliverer({
        db: fastify.db.background,
        box,
        send: transport.send,
        log: fastify.log,
        timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
        retrySchedule: config.WEBHOOKS_RETRY_SCHEDULE.split(',').map(Number),
      })
      // A change this instance committed wakes the tenant's webhooks (others find it at their next look); a change
      // of the webhooks themselves has the list read again, so that a new webhook's first events go out at once.
      fastify.addHook('onResponse', (request, reply, done) => {
        if (request.auth && request.method !== 'GET' && reply.statusCode < 300) {
          if (request.routeOptions.url?.startsWith(WEBHOOK_ROUTES)) deliverer.readDirectorySoon()
          deliverer.wake(request.auth.tenantId)
        }
        done()
      })
      fastify.addHook('onReady', async () => deliverer.start())
      fastify.addHook('preClose', async () => deliverer.stop())
    }
    fastify.addHook('onClose', async () => transport.close())
  },
  { name: 'webhook-delivery', dependencies: ['webhooks-repository'] },
)
