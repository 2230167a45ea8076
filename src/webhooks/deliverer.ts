// Delivers events to webhooks, in every instance that has WEBHOOKS_ENABLED (the default). Each webhook follows its
// tenant's event feed from a position of its own (webhook_cursors), so a change costs its transaction nothing but
// its event: what is to be delivered is the feed itself, as durable as the change. A round takes one webhook with
// a lease, posts the events after its position (and its retries due), PER_ROUND at most and CONCURRENCY at a time,
// then records the attempts, the retries and the new position in one transaction, under the lease: a round whose
// server died is done again by another once its lease ends (at least once). One instance delivers to a webhook at
// a time, so a slow or dead endpoint holds back only its own events. Each attempt is a POST of the event, signed as
// Standard Webhooks says; a failed one is due again after the next wait of WEBHOOKS_RETRY_SCHEDULE, then given up.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { Webhook as Signer } from 'standardwebhooks'
import type { Database } from '../db/database.js'
import type { Event } from '../events/model.js'
import type { EventColumns } from '../events/sql.js'
import type { SecretBox } from './secrets.js'
import {
  ADVANCE_SQL,
  ATTEMPTS_SQL,
  DIRECTORY_SQL,
  LEASE_SQL,
  LOOK_SQL,
  RELEASE_SQL,
  RETRIES_DONE_SQL,
  RETRY_SQL,
  SKIP_SQL,
} from './sql.js'
import type { Send, Sent } from './transport.js'

interface Target {
  tenantId: string
  id: string
  url: string
  events: Event['type'][]
  secret: Buffer
}

interface LookRow extends EventColumns {
  cursorXid: string
  cursorN: string
  leased: boolean
  windowXid: string | null
  windowN: string | null
  retry: boolean | null
  retryEventId: string | null
  attempts: number | null
}

/** One event to post in a round: a new one (its first attempt) or a retry. */
interface Task {
  eventId: string
  /** This attempt's number, from 1. */
  attempt: number
  retry: boolean
  event: Event | null
}

interface Outcome {
  task: Task
  sent: Sent
  at: Date
  durationMs: number
}

export interface DelivererOptions {
  db: Database
  box: SecretBox
  send: Send
  log: FastifyBaseLogger
  timeoutMs: number
  /** Seconds to wait before each retry; after the last, the delivery is given up. */
  retrySchedule: readonly number[]
}

/** New events and retries taken per round, and how many of them are in flight at once. */
const PER_ROUND = 32
const CONCURRENCY = 8
/** Webhooks in a round at once on this instance. */
const ROUNDS_AT_ONCE = 64
/** How often the schedule is looked at. */
const TICK_MS = 25
/** How long a webhook with nothing to do waits before it is looked at again, at most; wakes start it over. */
const IDLE_MS = 1000
/** The first wait after a webhook was woken or had work: it doubles up to IDLE_MS. */
const BRISK_MS = 20
/** How often the list of webhooks is read again. */
const DIRECTORY_MS = 5000
/** How long an instance whose key does not open a secret stays away from deliveries. */
const PAUSE_MS = 60_000

const keyOf = (tenantId: string, webhookId: string) => `${tenantId}/${webhookId}`

export class Deliverer {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private readonly inFlight = new Set<Promise<void>>()
  private failing = false
  /** Until when this instance takes no deliveries (its key did not open a secret). */
  private pausedUntil = 0
  private readonly abort = new AbortController()
  /** Long enough for a whole round of attempts that all time out, with room to record them. */
  private readonly leaseSeconds: number
  private directory = new Map<string, Target>()
  /** The directory's keys by tenant, for wake-ups. */
  private byTenant = new Map<string, string[]>()
  private directoryReadAt = 0
  /** Per webhook: when to look at it next, and the wait after that. */
  private readonly schedule = new Map<string, { at: number; wait: number }>()
  /** Webhooks in a round on this instance. */
  private readonly busy = new Set<string>()

  constructor(private readonly options: DelivererOptions) {
    const rounds = Math.ceil(PER_ROUND / CONCURRENCY)
    this.leaseSeconds = (rounds * options.timeoutMs + Math.max(1000, options.timeoutMs)) / 1000
  }

  start(): void {
    this.next(0)
  }

  /** Stops taking deliveries; attempts in flight are abandoned unrecorded and made again after their lease. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.abort.abort()
    await Promise.allSettled([...this.inFlight])
  }

  /** A change of the tenant was committed here: its webhooks are looked at now rather than at their next turn. */
  wake(tenantId: string): void {
    for (const key of this.byTenant.get(tenantId) ?? []) this.schedule.set(key, { at: 0, wait: BRISK_MS })
  }

  private next(ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.tick(), ms)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    try {
      if (Date.now() >= this.pausedUntil) await this.startRounds()
    } finally {
      this.next(TICK_MS)
    }
  }

  private async startRounds(): Promise<void> {
    if (Date.now() - this.directoryReadAt >= DIRECTORY_MS) await this.readDirectory()
    const now = Date.now()
    for (const [key, target] of this.directory) {
      if (this.busy.size >= ROUNDS_AT_ONCE) return
      const turn = this.schedule.get(key) ?? { at: 0, wait: BRISK_MS }
      if (this.busy.has(key) || turn.at > now) continue
      this.busy.add(key)
      const round = this.round(target, turn.wait).finally(() => {
        this.busy.delete(key)
        this.inFlight.delete(round)
        // A webhook whose round did something may have more to do at once.
        if (this.schedule.get(key)?.at === 0) this.next(0)
      })
      this.inFlight.add(round)
    }
  }

  private async readDirectory(): Promise<void> {
    try {
      const rows = await this.options.db.query<Target>('webhooks_directory', DIRECTORY_SQL, [])
      this.directory = new Map(rows.map((row) => [keyOf(row.tenantId, row.id), row]))
      this.byTenant = new Map()
      for (const [key, { tenantId }] of this.directory)
        this.byTenant.set(tenantId, [...(this.byTenant.get(tenantId) ?? []), key])
      for (const key of this.schedule.keys()) if (!this.directory.has(key)) this.schedule.delete(key)
      this.directoryReadAt = Date.now()
      if (this.failing) this.options.log.info('webhook deliveries: the database answers again')
      this.failing = false
    } catch (error) {
      if (!this.failing) this.options.log.warn({ err: error }, 'webhook deliveries: cannot read the webhooks')
      this.failing = true
      this.directoryReadAt = Date.now()
    }
  }

  /** Looks at one webhook; if it has something to do and no other instance holds it, does it. */
  private async round(target: Target, wait: number): Promise<void> {
    const key = keyOf(target.tenantId, target.id)
    let busy = false
    try {
      busy = await this.deliverRound(target)
    } catch (error) {
      // The database failed mid-round: the lease runs out and the round is done again.
      this.options.log.warn({ err: error, webhookId: target.id }, 'webhook deliveries: a round failed')
    }
    // More may be due at once after a round that did something; otherwise the webhook waits longer each time.
    this.schedule.set(
      key,
      busy ? { at: 0, wait: BRISK_MS } : { at: Date.now() + wait, wait: Math.min(wait * 2, IDLE_MS) },
    )
  }

  /** True when the round delivered something (more may be waiting). */
  private async deliverRound(target: Target): Promise<boolean> {
    const db = this.options.db
    const ids = [target.tenantId, target.id]
    const rows = await db.query<LookRow>('deliveries_look', LOOK_SQL, [...ids, target.events, PER_ROUND, PER_ROUND])
    const head = rows[0]
    if (head === undefined || head.leased) return false
    const tasks = rows.flatMap((row): Task[] => (row.retry === null ? [] : [taskOf(row)]))
    if (tasks.length === 0) {
      // Only events of other types follow, up to the window's end: the webhook moves past them, and is looked at
      // again at once.
      if (head.windowXid === null || head.windowN === null) return false
      const skip = [...ids, head.cursorXid, head.cursorN, head.windowXid, head.windowN]
      await db.query('deliveries_skip', SKIP_SQL, skip)
      return true
    }
    const leaseId = randomUUID()
    const leased = await db.query('deliveries_lease', LEASE_SQL, [
      ...ids,
      head.cursorXid,
      head.cursorN,
      this.leaseSeconds,
      leaseId,
    ])
    if (leased.length === 0) return false
    const outcomes = await this.post(target, tasks)
    if (this.stopped) return false
    if (outcomes === null) {
      // Given back untouched, for an instance whose key opens the secret.
      await db.query('deliveries_release', RELEASE_SQL, [...ids, leaseId])
      return false
    }
    // The position moves past the new events handed over (the last of them, in the order of positions).
    const newest = rows.filter((row) => row.retry === false).at(-1)
    await this.record(target, leaseId, outcomes, newest ?? { xid: head.cursorXid, n: head.cursorN })
    return true
  }

  /** Posts the round's events, CONCURRENCY at a time; null if this instance cannot sign them (wrong key). */
  private async post(target: Target, tasks: Task[]): Promise<Outcome[] | null> {
    let secret: string
    try {
      secret = this.options.box.open(target.secret)
    } catch {
      // This instance's WEBHOOKS_SECRET_KEY is not the one the secret was sealed with: it gives the round back to
      // an instance with the right key and pauses its deliveries.
      this.pausedUntil = Date.now() + PAUSE_MS
      this.options.log.error(
        { webhookId: target.id },
        "webhook deliveries: WEBHOOKS_SECRET_KEY does not open this webhook's secret; this instance pauses its deliveries",
      )
      return null
    }
    const signer = new Signer(secret)
    const outcomes: Outcome[] = []
    const queue = [...tasks]
    const worker = async () => {
      for (let task = queue.shift(); task !== undefined && !this.stopped; task = queue.shift()) {
        outcomes.push(await this.attempt(target, signer, task))
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, worker))
    return outcomes
  }

  private async attempt(target: Target, signer: Signer, task: Task): Promise<Outcome> {
    const at = new Date()
    const started = performance.now()
    let sent: Sent
    if (task.event === null) sent = { status: null, error: 'event no longer kept (EVENTS_RETENTION_DAYS)' }
    else {
      const { id, type, occurredAt, data } = task.event
      const body = JSON.stringify({ id, type, occurredAt, data })
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'rubrica-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signer.sign(id, at, body),
      }
      sent = await this.options.send(target.url, body, headers, this.options.timeoutMs, this.abort.signal)
    }
    return { task, sent, at, durationMs: Math.round(performance.now() - started) }
  }

  /** The round's attempts, retries and new position, in one transaction, if the lease is still this instance's. */
  private async record(
    target: Target,
    leaseId: string,
    outcomes: Outcome[],
    position: { xid: string | null; n: string | null },
  ): Promise<void> {
    const schedule = this.options.retrySchedule
    const ids = [target.tenantId, target.id]
    const retries: { eventId: string; attempts: number; delay: number }[] = []
    const over: string[] = []
    const attempts = outcomes.map(({ task, sent, at, durationMs }) => {
      const retry = task.event !== null && sent.error !== null && task.attempt <= schedule.length
      const outcome = sent.error === null ? 'delivered' : retry ? 'retried' : 'given_up'
      if (retry) retries.push({ eventId: task.eventId, attempts: task.attempt, delay: schedule[task.attempt - 1] ?? 0 })
      else if (task.retry) over.push(task.eventId)
      return { task, sent, at, durationMs, outcome }
    })
    await this.options.db.transaction(async (query) => {
      const moved = await query('deliveries_advance', ADVANCE_SQL, [...ids, position.xid, position.n, leaseId])
      // The lease ran out and another instance took the webhook: it does this round again, and records it.
      if (moved.length === 0) throw new Error('the lease ran out before the round was recorded')
      await query('deliveries_attempts', ATTEMPTS_SQL, [
        ...ids,
        attempts.map(({ task }) => task.eventId),
        attempts.map(({ task }) => task.attempt),
        attempts.map(({ sent }) => sent.status),
        attempts.map(({ sent }) => sent.error),
        attempts.map(({ durationMs }) => durationMs),
        attempts.map(({ outcome }) => outcome),
        attempts.map(({ at }) => at.toISOString()),
      ])
      if (retries.length > 0) {
        await query('deliveries_retry', RETRY_SQL, [
          ...ids,
          retries.map(({ eventId }) => eventId),
          retries.map(({ attempts }) => attempts),
          retries.map(({ delay }) => delay),
        ])
      }
      if (over.length > 0) await query('deliveries_retries_done', RETRIES_DONE_SQL, [...ids, over])
    })
  }
}

function taskOf(row: LookRow): Task {
  const event =
    row.id === null
      ? null
      : {
          id: row.id,
          type: row.type as Event['type'],
          occurredAt: row.occurredAt as string,
          data: row.data as Event['data'],
        }
  const eventId = row.retry ? (row.retryEventId as string) : (row.id as string)
  return { eventId, attempt: (row.attempts ?? 0) + 1, retry: row.retry === true, event }
}
