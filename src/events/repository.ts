// Reading a tenant's event feed, and purging events past the retention. Positions are the tenant's own (seq, n)
// pairs, shown as one number (src/events/position.ts); a page is read in one statement (src/events/sql.ts), so
// "next" never runs ahead of what every transaction that could still record an event before it has done.
import fp from 'fastify-plugin'
import type { Database, Query } from '../db/database.js'
import { schedulePurge, tenantsInTurn } from '../db/housekeeping.js'
import { errors } from '../errors/catalogue.js'
import { type Event, type EventListQuery, type EventPage, FEED_WINDOW } from './model.js'
import {
  comparePositions,
  decodePosition,
  encodePosition,
  LARGEST_SEQ,
  type Position,
  positionOf,
  START,
} from './position.js'
import {
  EMPTY_COMMITS_SQL,
  type EventColumns,
  FIRST_KEPT_SQL,
  PURGE_SQL,
  PURGED_SQL,
  pageStatement,
  SEQUENCE_SQL,
} from './sql.js'

interface PageRow extends EventColumns {
  endSeq: string | null
  endN: string | null
  windowSeq: string | null
  windowN: string | null
  purgedSeq: string | null
  purgedN: string | null
}

/** An event with its position, as pages and webhooks read it. */
export type PositionedEvent = Event & { position: Position }

/** Events deleted per statement of a purge, so that none holds its locks for long. */
const PURGE_BATCH = 10_000

export class EventRepository {
  constructor(
    private readonly db: Database,
    private readonly retentionDays: number,
    /** How many events a page filtered by type reads at most. */
    private readonly window = FEED_WINDOW,
    /** Where a page that could not number new commits says so (it is served without them). */
    private readonly onUnnumbered: (error: unknown) => void = () => {},
  ) {}

  /**
   * Gives the tenant's transactions committed since the last reader their positions (SEQUENCE_SQL): what every
   * reader of the feed does first, through `query` (a transaction's, when the caller is in one).
   */
  async sequence(tenantId: string, query: Query = this.db.query): Promise<void> {
    await query('events_sequence', SEQUENCE_SQL, [tenantId])
  }

  /**
   * Up to `limit` events after `after` (of `types` when given), the feed's end, and what was purged.
   * `after` is trusted: the caller checks it against the end and the purged position.
   */
  async read(
    tenantId: string,
    after: Position,
    limit: number,
    types?: readonly Event['type'][],
  ): Promise<{ events: PositionedEvent[]; end: Position; purged: Position; windowEnd: Position | null }> {
    // Numbering is a write: a shard moved while blocking writes (Citus) refuses or cancels it. The page is then
    // served without the newest commits, which a later read numbers after it: late, never out of order.
    await this.sequence(tenantId).catch(this.onUnnumbered)
    const statement = pageStatement(limit, types !== undefined, this.window)
    const params = [tenantId, after.seq.toString(), after.n.toString(), ...(types !== undefined ? [types] : [])]
    const rows = await this.db.query<PageRow>(statement.name, statement.sql, params)
    const first = rows[0]
    const purged = positionOf(first?.purgedSeq ?? null, first?.purgedN ?? null) ?? START
    const last = positionOf(first?.endSeq ?? null, first?.endN ?? null) ?? START
    // Purged to a position past every event left (all of them purged): the end is there.
    const end = comparePositions(last, purged) < 0 ? purged : last
    const events: PositionedEvent[] = []
    for (const row of rows) {
      const position = positionOf(row.seq, row.n)
      if (position === null) continue
      events.push({
        id: row.id as string,
        type: row.type as Event['type'],
        occurredAt: row.occurredAt as string,
        data: row.data as Event['data'],
        position,
      })
    }
    return { events, end, purged, windowEnd: positionOf(first?.windowSeq ?? null, first?.windowN ?? null) }
  }

  /**
   * The events after `query.after` (none: from the oldest kept; `now`: none, and the current end as `next`).
   * Throws 410 cursor_expired when events after the position were purged, 400 invalid_query when no answer of
   * this tenant can have given it.
   */
  async page(tenantId: string, query: EventListQuery): Promise<EventPage> {
    const given = query.after === undefined || query.after === 'now' ? START : decodePosition(query.after)
    if (given.seq > LARGEST_SEQ) throw errors.unknownPosition()
    const types = query.type === undefined ? undefined : [query.type]
    const { events, end, purged, windowEnd } = await this.read(tenantId, given, query.limit + 1, types)
    if (query.after === 'now') return { data: [], next: encodePosition(end), hasMore: false }
    if (query.after !== undefined) {
      if (comparePositions(given, end) > 0) throw errors.unknownPosition()
      if (comparePositions(given, purged) < 0) throw errors.cursorExpired(this.retentionDays)
    }
    const page = events.slice(0, query.limit)
    const last = page.at(-1)
    // More than a page: the next starts after its last event. Otherwise a filter found the page's events (or none)
    // among those it read: the next starts after the last it read (the end when it read to the end). Unfiltered,
    // the reader is at the end of what is numbered.
    const next = events.length > query.limit && last ? last.position : (windowEnd ?? end)
    const hasMore = comparePositions(next, end) < 0
    return {
      data: page.map(({ id, type, occurredAt, data }) => ({ id, type, occurredAt, data })),
      next: encodePosition(next),
      hasMore,
    }
  }

  /** Deletes what is past the retention, tenant by tenant; returns how many events went. */
  async purge(): Promise<number> {
    let total = 0
    for await (const tenantId of tenantsInTurn(this.db)) total += await this.purgeTenant(tenantId)
    return total
  }

  /**
   * Deletes the tenant's events that come before its first event still within the retention (all of them when
   * none is), batch by batch, each batch in one transaction with the record of the position it purged up to:
   * what remains of a tenant's feed is always what follows that position.
   */
  async purgeTenant(tenantId: string): Promise<number> {
    await this.sequence(tenantId)
    const [kept] = await this.db.query<{ seq: string; n: string }>('events_first_kept', FIRST_KEPT_SQL, [
      tenantId,
      this.retentionDays,
    ])
    let total = 0
    for (;;) {
      const deleted = await this.db.transaction(async (query) => {
        const [row] = await query<{ deleted: number; seq: string | null; n: string | null }>(
          'events_purge',
          PURGE_SQL,
          [tenantId, kept?.seq ?? null, kept?.n ?? null, PURGE_BATCH, this.retentionDays],
        )
        if (row && row.deleted > 0) {
          await query('events_purged', PURGED_SQL, [tenantId, row.seq, row.n])
          await query('events_empty_commits', EMPTY_COMMITS_SQL, [tenantId, row.seq])
        }
        return row?.deleted ?? 0
      })
      total += deleted
      if (deleted < PURGE_BATCH) return total
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventRepository
  }
}

/** The repository on the app, and the purge every ten minutes on every instance (a purge that races is harmless). */
export const eventsRepository = fp(
  async function eventsRepository(fastify) {
    const events = new EventRepository(fastify.db, fastify.config.EVENTS_RETENTION_DAYS, FEED_WINDOW, (error) =>
      fastify.log.warn({ err: error }, 'events: a page served without numbering new commits'),
    )
    fastify.decorate('events', events)
    schedulePurge(fastify, 'old events', () => events.purge())
  },
  { name: 'events-repository', dependencies: ['database'] },
)
