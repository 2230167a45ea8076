// Webhooks of a tenant: registered, listed, read, deleted, and their deliveries log; every statement filters by
// the tenant. A webhook's secret is made here and returned once, sealed before it is stored.
import fp from 'fastify-plugin'
import type { Database } from '../db/database.js'
import { purgeEachTenant, schedulePurge } from '../db/housekeeping.js'
import { EVENT_TYPES } from '../events/model.js'
import { END_SQL, SEQUENCE_SQL } from '../events/sql.js'
import type { Delivery, Webhook, WebhookCreate, WebhookCreated } from './model.js'
import { WEBHOOK_LIMITS } from './model.js'
import { newSecret, SecretBox } from './secrets.js'
import {
  COUNT_SQL,
  CREATE_SQL,
  CURSOR_SQL,
  DELETE_SQL,
  DELIVERIES_SQL,
  GET_SQL,
  LIST_SQL,
  LOCK_TENANT_SQL,
  PURGE_SQL,
} from './sql.js'

export type CreateWebhookResult = { kind: 'created'; webhook: WebhookCreated } | { kind: 'too_many' }

export class WebhookRepository {
  constructor(
    private readonly db: Database,
    /** Null when no key is configured: webhooks cannot be created. */
    readonly box: SecretBox | null,
  ) {}

  async create(tenantId: string, input: WebhookCreate): Promise<CreateWebhookResult> {
    if (this.box === null) throw new Error('no WEBHOOKS_SECRET_KEY: the routes refuse before this')
    const secret = newSecret()
    const events = input.events ?? [...EVENT_TYPES]
    const sealed = this.box.seal(secret)
    const [row] = await this.db.transaction(async (query) => {
      await query('webhooks_lock_tenant', LOCK_TENANT_SQL, [tenantId])
      const [held] = await query<{ count: number }>('webhooks_count', COUNT_SQL, [tenantId])
      if ((held?.count ?? 0) >= WEBHOOK_LIMITS.perTenant) return []
      const params = [tenantId, input.url, events, input.description ?? null, sealed]
      const created = await query<Webhook>('webhooks_create', CREATE_SQL, params)
      // It takes the events that follow the feed's end as it is now: what was committed before included.
      await query('events_sequence', SEQUENCE_SQL, [tenantId])
      const [end] = await query<{ seq: string; n: string }>('events_end', END_SQL, [tenantId])
      for (const webhook of created) {
        await query('webhooks_cursor', CURSOR_SQL, [tenantId, webhook.id, end?.seq ?? '0', end?.n ?? '0'])
      }
      return created
    })
    return row ? { kind: 'created', webhook: { ...row, secret } } : { kind: 'too_many' }
  }

  list(tenantId: string): Promise<Webhook[]> {
    return this.db.query<Webhook>('webhooks_list', LIST_SQL, [tenantId])
  }

  async get(tenantId: string, id: string): Promise<Webhook | null> {
    const [row] = await this.db.query<Webhook>('webhooks_get', GET_SQL, [tenantId, id])
    return row ?? null
  }

  /** Deletes it with its position, its retries (deliveries stop at once) and its log; false when there was none. */
  async remove(tenantId: string, id: string): Promise<boolean> {
    return (await this.db.query('webhooks_delete', DELETE_SQL, [tenantId, id])).length > 0
  }

  async deliveries(tenantId: string, id: string): Promise<Delivery[] | null> {
    if ((await this.get(tenantId, id)) === null) return null
    return this.db.query<Delivery>('webhooks_deliveries', DELIVERIES_SQL, [tenantId, id])
  }

  /** Deletes the attempts logged more than `days` ago, tenant by tenant; returns how many went. */
  purge(days: number): Promise<number> {
    return purgeEachTenant(this.db, 'delivery_attempts_purge', PURGE_SQL, [days])
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookRepository
  }
}

/**
 * The repository on the app, with the box of signing secrets (none without the instance's secrets key, and then
 * webhooks cannot be created: src/config/secret-key.ts says so at start). The deliveries log is kept as long as
 * events, then purged with them (every instance; a race is harmless).
 */
export const webhooksRepository = fp(
  async function webhooksRepository(fastify) {
    const key = fastify.secretKey
    const repository = new WebhookRepository(fastify.db, key === null ? null : new SecretBox(key))
    fastify.decorate('webhooks', repository)
    schedulePurge(fastify, 'old delivery attempts', () => repository.purge(fastify.config.EVENTS_RETENTION_DAYS))
  },
  { name: 'webhooks-repository', dependencies: ['database', 'secret-key'] },
)
