// Delivers events to webhooks, in every instance that has WEBHOOKS_ENABLED (the default). What is to be
// delivered is in PostgreSQL, written with the change (the events trigger), so nothing is lost when a server dies:
// a delivery is taken with a lease, and one whose server died is taken again once its lease ends (at least once).
// Each webhook's deliveries are taken by one instance at a time, a batch at a time, so a slow or dead endpoint
// holds back only its own. Each attempt is a POST of the event, signed as Standard Webhooks says, and recorded;
// a failed one is due again after the next wait of WEBHOOKS_RETRY_SCHEDULE, then given up.
import type { FastifyBaseLogger } from 'fastify'
import { Webhook as Signer } from 'standardwebhooks'
import type { Database } from '../db/database.js'
import type { Event } from '../events/model.js'
import { EVENTS_BY_POSITION_SQL } from '../events/sql.js'
import type { SecretBox } from './secrets.js'
import { CLAIM_SQL, GIVE_BACK_SQL, RECORD_SQL, TARGETS_SQL } from './sql.js'
import type { Send, Sent } from './transport.js'

interface Claim {
  tenantId: string
  webhookId: string
  eventSeq: string
  eventId: string
  attempt: number
}

interface Target {
  tenantId: string
  id: string
  url: string
  secret: Buffer
}

type EventRow = Event & { position: string }

export interface DelivererOptions {
  db: Database
  box: SecretBox
  send: Send
  log: FastifyBaseLogger
  timeoutMs: number
  /** Seconds to wait before each retry; after the last, the delivery is given up. */
  retrySchedule: readonly number[]
}

/** Deliveries taken per webhook at a time, and how many of them are in flight at once. */
const PER_WEBHOOK = 32
const CONCURRENCY = 8
/** How often to look for due deliveries when there was nothing to do. */
const POLL_MS = 100
/** How long an instance whose key does not open a secret stays away from deliveries. */
const PAUSE_MS = 60_000

const groupBy = <T>(items: readonly T[], key: (item: T) => string) => {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const group = groups.get(key(item))
    if (group) group.push(item)
    else groups.set(key(item), [item])
  }
  return groups
}

export class Deliverer {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private readonly inFlight = new Set<Promise<void>>()
  private failing = false
  /** Until when this instance takes no deliveries (its key did not open a secret). */
  private pausedUntil = 0
  private readonly abort = new AbortController()
  /** Long enough for a whole batch of attempts that all time out, with room to record them. */
  private readonly leaseSeconds: number

  constructor(private readonly options: DelivererOptions) {
    const rounds = Math.ceil(PER_WEBHOOK / CONCURRENCY)
    this.leaseSeconds = (rounds * options.timeoutMs + Math.max(1000, options.timeoutMs)) / 1000
  }

  start(): void {
    this.next(0)
  }

  /** Stops taking deliveries; attempts in flight are abandoned unrecorded and retried after their lease. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.abort.abort()
    await Promise.allSettled([...this.inFlight])
  }

  private next(ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.tick(), ms)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    let claims: Claim[] = []
    if (Date.now() < this.pausedUntil) return this.next(POLL_MS)
    try {
      claims = await this.options.db.query<Claim>('deliveries_claim', CLAIM_SQL, [PER_WEBHOOK, this.leaseSeconds])
      if (this.failing) this.options.log.info('webhook deliveries: the database answers again')
      this.failing = false
    } catch (error) {
      if (!this.failing) this.options.log.warn({ err: error }, 'webhook deliveries: cannot take due deliveries')
      this.failing = true
    }
    if (claims.length > 0) {
      const batch = this.deliverAll(claims).finally(() => {
        this.inFlight.delete(batch)
        // A webhook whose batch is done may have more due at once.
        this.next(0)
      })
      this.inFlight.add(batch)
    }
    this.next(POLL_MS)
  }

  private async deliverAll(claims: Claim[]): Promise<void> {
    try {
      const targets = await this.targets(claims)
      const events = await this.events(claims)
      const byWebhook = groupBy(claims, (claim) => `${claim.tenantId}/${claim.webhookId}`)
      await Promise.all([...byWebhook.values()].map((group) => this.deliverGroup(group, targets, events)))
    } catch (error) {
      // The database failed mid-batch: the leases run out and the deliveries are taken again.
      this.options.log.warn({ err: error }, 'webhook deliveries: a batch failed; it is taken again after its lease')
    }
  }

  private async targets(claims: Claim[]): Promise<Map<string, Target>> {
    const rows = await this.options.db.query<Target>('deliveries_targets', TARGETS_SQL, [
      claims.map((claim) => claim.tenantId),
      claims.map((claim) => claim.webhookId),
    ])
    return new Map(rows.map((row) => [`${row.tenantId}/${row.id}`, row]))
  }

  private async events(claims: Claim[]): Promise<Map<string, EventRow>> {
    const found = new Map<string, EventRow>()
    for (const [tenantId, ofTenant] of groupBy(claims, (claim) => claim.tenantId)) {
      const rows = await this.options.db.query<EventRow>('deliveries_events', EVENTS_BY_POSITION_SQL, [
        tenantId,
        [...new Set(ofTenant.map((claim) => claim.eventSeq))],
      ])
      for (const row of rows) found.set(`${tenantId}/${row.position}`, row)
    }
    return found
  }

  /** One webhook's batch, CONCURRENCY at a time, in the order of its events. */
  private async deliverGroup(group: Claim[], targets: Map<string, Target>, events: Map<string, EventRow>) {
    const queue = [...group]
    const worker = async () => {
      for (let claim = queue.shift(); claim !== undefined && !this.stopped; claim = queue.shift()) {
        const target = targets.get(`${claim.tenantId}/${claim.webhookId}`)
        // Deleted meanwhile: its deliveries went with it.
        if (target === undefined) continue
        await this.attempt(claim, target, events.get(`${claim.tenantId}/${claim.eventSeq}`))
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, group.length) }, worker))
  }

  private async attempt(claim: Claim, target: Target, event: EventRow | undefined): Promise<void> {
    const at = new Date()
    const started = performance.now()
    let sent: Sent
    if (event === undefined) sent = { status: null, error: 'event no longer kept (EVENTS_RETENTION_DAYS)' }
    else {
      const prepared = this.prepare(target, event, at)
      if (prepared === null) return this.giveBack(claim)
      sent = await this.post(target.url, prepared)
    }
    if (this.stopped) return
    const durationMs = Math.round(performance.now() - started)
    const retry = event !== undefined && sent.error !== null && claim.attempt <= this.options.retrySchedule.length
    const state = sent.error === null ? 'delivered' : retry ? 'pending' : 'failed'
    const delay = retry ? (this.options.retrySchedule[claim.attempt - 1] ?? null) : null
    await this.options.db.query('deliveries_record', RECORD_SQL, [
      claim.tenantId,
      claim.webhookId,
      claim.eventSeq,
      claim.attempt,
      state,
      delay,
      sent.status,
      sent.error,
      durationMs,
      at,
    ])
  }

  /**
   * This instance cannot open the webhook's secret: its WEBHOOKS_SECRET_KEY is not the one the secret was sealed
   * with. The delivery goes back uncounted, for an instance with the right key, and this one pauses its deliveries.
   */
  private async giveBack(claim: Claim): Promise<void> {
    this.pausedUntil = Date.now() + PAUSE_MS
    this.options.log.error(
      { webhookId: claim.webhookId },
      "webhook deliveries: WEBHOOKS_SECRET_KEY does not open this webhook's secret; this instance pauses its deliveries",
    )
    await this.options.db.query('deliveries_give_back', GIVE_BACK_SQL, [
      claim.tenantId,
      claim.webhookId,
      claim.eventSeq,
      claim.attempt,
    ])
  }

  /** The signed request of an event (the same body and webhook-id on every attempt); null if the secret is sealed with another key. */
  private prepare(target: Target, event: EventRow, at: Date): { body: string; headers: Record<string, string> } | null {
    const body = JSON.stringify({ id: event.id, type: event.type, occurredAt: event.occurredAt, data: event.data })
    let secret: string
    try {
      secret = this.options.box.open(target.secret)
    } catch {
      return null
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'rubrica-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Signer(secret).sign(event.id, at, body),
    }
    return { body, headers }
  }

  private post(url: string, request: { body: string; headers: Record<string, string> }): Promise<Sent> {
    return this.options.send(url, request.body, request.headers, this.options.timeoutMs, this.abort.signal)
  }
}
