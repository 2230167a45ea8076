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
import { type EventColumns, SEQUENCE_SQL } from '../events/sql.js'
import type { SecretBox } from './secrets.js'
import {
  ADVANCE_SQL,
  ATTEMPTS_SQL,
  DIRECTORY_SQL,
  ERASED_EVENTS_SQL,
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
  cursorSeq: string
  cursorN: string
  leased: boolean
  windowSeq: string | null
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
  /** A new event's position in the feed (null for a retry). */
  position: Position | null
}

interface Position {
  seq: string
  n: string
}

interface Outcome {
  task: Task
  sent: Sent
  at: Date
  durationMs: number
}

export interface DelivererOptions {
  /** The background pool's statements (Database.background): rounds never queue behind requests. */
  db: Database['background']
  box: SecretBox
  send: Send
  log: FastifyBaseLogger
  timeoutMs: number
  /** Seconds to wait before each retry; after the last, the delivery is given up. */
  retrySchedule: readonly number[]
}

/** New events and retries taken per round, and how many of them are in flight at once. */
export const PER_ROUND = 64
export const CONCURRENCY = 8
/** Waves of attempts a lease gives time for, each up to WEBHOOKS_TIMEOUT_MS: a round stops when the next would not fit. */
export const WAVES_PER_LEASE = 4
/** Time kept at a lease's end to record the round. */
const LEASE_MARGIN_MS = 1000
/** Webhooks in a round at once on this instance. */
const ROUNDS_AT_ONCE = 64
/** How often the schedule is looked at. */
const TICK_MS = 25
/** How long a webhook with nothing to do waits before it is looked at again, at most; wakes start it over. */
const IDLE_MS = 1000
/** The first wait after a webhook was woken or had work: it doubles up to IDLE_MS. */
const BRISK_MS = 20
/**
 * After a round that delivered less than a full page (the webhook caught up), the next waits this long, wakes
 * included: a tenant writing 200 contacts a second would otherwise start a round, and its four commits, for every
 * one or two of them, and the commits' flushes slow every write of the database. A full round goes on at once.
 */
export const CAUGHT_UP_MS = 40

/** What a round did (deliverRound). */
type Round = 'idle' | 'caught up' | 'full'
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
  /** Webhooks whose last round caught up: not before when their next may start (CAUGHT_UP_MS). */
  private readonly caughtUp = new Map<string, number>()
  /** Webhooks in a round on this instance. */
  private readonly busy = new Set<string>()

  constructor(private readonly options: DelivererOptions) {
    this.leaseSeconds = (WAVES_PER_LEASE * options.timeoutMs + Math.max(LEASE_MARGIN_MS, options.timeoutMs)) / 1000
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
    for (const key of this.byTenant.get(tenantId) ?? []) {
      this.schedule.set(key, { at: this.caughtUp.get(key) ?? 0, wait: BRISK_MS })
    }
  }

  /** The webhooks changed here: the list is read again at the next tick rather than within DIRECTORY_MS. */
  readDirectorySoon(): void {
    this.directoryReadAt = 0
    this.next(0)
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
    let done: Round = 'idle'
    try {
      done = await this.deliverRound(target)
    } catch (error) {
      // The database failed mid-round: the lease runs out and the round is done again.
      this.options.log.warn({ err: error, webhookId: target.id }, 'webhook deliveries: a round failed')
    }
    // More may be due at once after a full round; a round that caught up lets CAUGHT_UP_MS pass; otherwise the
    // webhook waits longer each time.
    const now = Date.now()
    if (done === 'caught up') this.caughtUp.set(key, now + CAUGHT_UP_MS)
    else this.caughtUp.delete(key)
    this.schedule.set(
      key,
      done === 'full'
        ? { at: 0, wait: BRISK_MS }
        : done === 'caught up'
          ? { at: now + CAUGHT_UP_MS, wait: BRISK_MS }
          : { at: now + wait, wait: Math.min(wait * 2, IDLE_MS) },
    )
  }

  /** What the round did: nothing, all there was (caught up), or a full page (more may be waiting). */
  private async deliverRound(target: Target): Promise<Round> {
    const db = this.options.db
    const ids = [target.tenantId, target.id]
    // The tenant's transactions committed since the last reader take their positions first.
    await db.query('events_sequence', SEQUENCE_SQL, [target.tenantId])
    const rows = await db.query<LookRow>('deliveries_look', LOOK_SQL, [...ids, target.events, PER_ROUND, PER_ROUND])
    const head = rows[0]
    if (head === undefined || head.leased) return 'idle'
    const tasks = rows.flatMap((row): Task[] => (row.retry === null ? [] : [taskOf(row)]))
    if (tasks.length === 0) {
      // Only events of other types follow, up to the window's end: the webhook moves past them, and is looked at
      // again at once.
      if (head.windowSeq === null || head.windowN === null) return 'idle'
      const skip = [...ids, head.cursorSeq, head.cursorN, head.windowSeq, head.windowN]
      await db.query('deliveries_skip', SKIP_SQL, skip)
      return 'full'
    }
    const leaseId = randomUUID()
    const leased = await db.query('deliveries_lease', LEASE_SQL, [
      ...ids,
      head.cursorSeq,
      head.cursorN,
      this.leaseSeconds,
      leaseId,
    ])
    if (leased.length === 0) return 'idle'
    const outcomes = await this.post(target, tasks, performance.now() + this.leaseSeconds * 1000)
    if (this.stopped) return 'idle'
    if (outcomes === null) {
      // Given back untouched, for an instance whose key opens the secret.
      await db.query('deliveries_release', RELEASE_SQL, [...ids, leaseId])
      return 'idle'
    }
    // The position moves past the new events handed over (the last of them, in the order of positions); those a
    // round had no time for come in the next.
    const newest = outcomes.findLast(({ task }) => task.position !== null)?.task.position
    await this.record(target, leaseId, outcomes, newest ?? { seq: head.cursorSeq, n: head.cursorN })
    return tasks.length >= PER_ROUND || outcomes.length < tasks.length ? 'full' : 'caught up'
  }

  /**
   * Posts the round's events, CONCURRENCY at a time, while the lease (until `leaseEnd`) leaves time for another
   * wave; null if this instance cannot sign them (wrong key).
   */
  private async post(target: Target, tasks: Task[], leaseEnd: number): Promise<Outcome[] | null> {
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
    // In waves of CONCURRENCY, each after a look at which of its contacts were erased since the round read them:
    // an attempt that starts after an erasure committed carries the erased contact's id alone, as the feed shows.
    for (let start = 0; start < tasks.length && !this.stopped; start += CONCURRENCY) {
      if (start > 0 && performance.now() + this.options.timeoutMs + LEASE_MARGIN_MS > leaseEnd) break
      const wave = await this.withErasures(target.tenantId, tasks.slice(start, start + CONCURRENCY))
      outcomes.push(...(await Promise.all(wave.map((task) => this.attempt(target, signer, task)))))
    }
    return outcomes
  }

  /** The tasks, those whose contact is erased by now showing its id alone. */
  private async withErasures(tenantId: string, tasks: Task[]): Promise<Task[]> {
    const ids = tasks.flatMap(({ event }) => (event && !('erased' in event.data) ? [event.id] : []))
    if (ids.length === 0) return tasks
    const rows = await this.options.db.query<{ id: string }>('deliveries_erased', ERASED_EVENTS_SQL, [tenantId, ids])
    const erased = new Set(rows.map(({ id }) => id))
    return tasks.map((task) =>
      task.event && erased.has(task.event.id)
        ? { ...task, event: { ...task.event, data: { id: task.event.data.id, erased: true } } }
        : task,
    )
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
    position: { seq: string | null; n: string | null },
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
      const moved = await query('deliveries_advance', ADVANCE_SQL, [...ids, position.seq, position.n, leaseId])
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
  const position = row.retry ? null : { seq: row.seq as string, n: row.n as string }
  return { eventId, attempt: (row.attempts ?? 0) + 1, retry: row.retry === true, event, position }
}
