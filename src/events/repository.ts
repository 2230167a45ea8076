// Reading a tenant's event feed, and purging events past the retention. Positions are the tenant's own event
// numbers; a page is read in one statement (src/events/sql.ts), so "next" never runs ahead of what is committed.
import fp from 'fastify-plugin'
import type { Database } from '../db/database.js'
import { purgeInBatches, schedulePurge } from '../db/housekeeping.js'
import { errors } from '../errors/catalogue.js'
import type { Event, EventListQuery, EventPage } from './model.js'
import { PURGE_SQL, pageStatement } from './sql.js'

interface PageRow {
  lastSeq: string
  purgedThrough: string
  position: string | null
  id: string | null
  type: Event['type'] | null
  occurredAt: string | null
  data: Event['data'] | null
}

export class EventRepository {
  constructor(
    private readonly db: Database,
    private readonly retentionDays: number,
  ) {}

  /**
   * The events after `query.after` (none: from the oldest kept; `now`: none, and the current end as `next`).
   * Throws 410 cursor_expired when events after the position were purged, 400 invalid_query when no answer of
   * this tenant can have given it.
   */
  async page(tenantId: string, query: EventListQuery): Promise<EventPage> {
    const after = query.after === undefined || query.after === 'now' ? '0' : query.after
    const statement = pageStatement(query.limit + 1, query.type !== undefined)
    const params = [tenantId, after, ...(query.type !== undefined ? [query.type] : [])]
    const rows = await this.db.query<PageRow>(statement.name, statement.sql, params)
    const counter = rows[0] ?? { lastSeq: '0', purgedThrough: '0' }
    const lastSeq = BigInt(counter.lastSeq)
    if (query.after === 'now') return { data: [], next: counter.lastSeq, hasMore: false }
    if (query.after !== undefined) {
      if (BigInt(after) > lastSeq) throw errors.unknownPosition()
      if (BigInt(after) < BigInt(counter.purgedThrough)) throw errors.cursorExpired(this.retentionDays)
    }
    const events = rows.filter((row): row is PageRow & { position: string } => row.position !== null)
    const page = events.slice(0, query.limit)
    const hasMore = events.length > query.limit
    // Without more, the reader is at the end of what is committed, past any events the type filter left out.
    const next = hasMore ? (page.at(-1)?.position ?? after) : counter.lastSeq
    return {
      data: page.map((row) => ({
        id: row.id as string,
        type: row.type as Event['type'],
        occurredAt: row.occurredAt as string,
        data: row.data as Event['data'],
      })),
      next,
      hasMore,
    }
  }

  /** Deletes what is past the retention, batch by batch; returns how many events went. */
  purge(): Promise<number> {
    return purgeInBatches(this.db, 'events_purge', PURGE_SQL, [this.retentionDays])
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
    const events = new EventRepository(fastify.db, fastify.config.EVENTS_RETENTION_DAYS)
    fastify.decorate('events', events)
    schedulePurge(fastify, 'old events', () => events.purge())
  },
  { name: 'events-repository', dependencies: ['database'] },
)
