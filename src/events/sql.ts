// The event feed's SQL. A tenant's events are ordered by position (xid, n): the id of the transaction that
// recorded them and their number within it (the events trigger). Transaction ids are handed out as transactions
// begin to write, not as they commit, so a page serves only events of transactions older than every transaction
// of this database still running (HORIZON): those have all ended, so no event can appear later before a position
// already served. The contact of each event is its stored row made a `contacts` record again and read with the
// very select list GET uses. Every statement names its tenant, so that a distributed PostgreSQL runs it on the
// tenant's node, where the snapshot is taken too.
import { selectContact } from '../contacts/sql.js'
import { isoUtc } from '../db/iso-time.js'
import { statementName } from '../db/statement-name.js'
import { type Event, FEED_WINDOW } from './model.js'

/**
 * Below this transaction id, every transaction of this database has ended: the oldest one still running in it
 * when the statement's snapshot was taken, or, with none, the first id not yet given out. Transactions of other
 * databases of the same server do not count (their ids are shared, their events are not): a transaction the
 * snapshot saw running that is not known to be another database's, running or prepared, counts as this one's.
 * Read through functions rather than the pg_stat_activity view, so that a distributed PostgreSQL (Citus) runs it
 * on the node of the tenant's shards, as part of the statement, rather than on the node that plans it.
 */
export const HORIZON = `COALESCE((SELECT min(x::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) x
    WHERE NOT EXISTS (SELECT 1 FROM pg_stat_get_activity(NULL) a
        WHERE a.backend_xid = x::xid AND a.datid <> (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))
      AND NOT EXISTS (SELECT 1 FROM pg_prepared_xact() p
        WHERE p.transaction = x::xid AND p.dbid <> (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))),
  pg_snapshot_xmax(pg_current_snapshot())::text::bigint)`

/**
 * Events as the feed and webhooks show them, select list and FROM, over the events that `pick` (a WHERE, and an
 * ORDER BY and LIMIT if any, over `source`, the events table by default) chooses: position, id, type, time, and the contact made a `contacts`
 * record again and read with GET's select list, as JSON; an erased contact's events hold no contact, and show its
 * id alone, with `erased: true` (ErasedContact). The events are chosen in a subquery of their own, so that the JSON
 * is built for the rows kept alone: in one level, a plan that sorts (chosen when the table's statistics are older
 * than a large import) builds it for every event after the position before its LIMIT keeps a page of them.
 */
export function eventRows(pick: string, source = 'events e'): string {
  return `e.xid::text AS xid, e.n::text AS n, e.id, e.type,
        ${isoUtc('e.occurred_at')} AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT ${selectContact('c')}) x) END AS data
      FROM (SELECT * FROM ${source} ${pick}) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c`
}

/** The columns eventRows selects, each null in a row that an outer join left without an event. */
export interface EventColumns {
  xid: string | null
  n: string | null
  id: string | null
  type: Event['type'] | null
  occurredAt: string | null
  data: Event['data'] | null
}

/** The tenant's feed end: its last final event's position (no row without one). */
export const END_SQL = `SELECT e.xid::text AS xid, e.n::text AS n FROM events e
  WHERE e.tenant_id = $1 AND e.xid < ${HORIZON} ORDER BY e.xid DESC, e.n DESC LIMIT 1`

/** One statement per shape (a page size, with or without a type filter), named from its text. */
const shapes = new Map<string, { name: string; sql: string }>()

/**
 * `columns` of the tenant's first `count` final events after `after` (SQL of a row of xid and n), below `horizon`,
 * in the order of positions, as `events e`.
 */
function firstEvents(columns: string, after: string, horizon: string, count: number): string {
  return `SELECT ${columns} FROM events e WHERE e.tenant_id = $1 AND (e.xid, e.n) > ${after} AND e.xid < ${horizon}
        ORDER BY e.xid, e.n LIMIT ${count}`
}

/**
 * The position of the last of the (up to) `window` final events after `after` (SQL of a row of xid and n), below
 * `horizon`: where a scan for some types stops in one statement. No row when no event follows, or when `when`
 * (SQL, evaluated once) is false: then the window is not read.
 */
export function windowEnd(after: string, horizon: string, window: number, when = 'true'): string {
  return `SELECT w.xid, w.n FROM (${firstEvents('e.xid, e.n', after, horizon, window)}) w
      WHERE ${when} ORDER BY w.xid DESC, w.n DESC LIMIT 1`
}

/**
 * The feed's end (the last final event's position, null without one), what the retention purged (null if
 * nothing), and up to `rows` final events after ($2, $3), oldest first: always one row at least, with null event
 * columns when there is no event. `filtered`: only events of the types `$4` (an array), among the next `window`
 * events at most; when fewer than `rows` are found, `windowXid`, `windowN` is the last event read (null when none
 * follows), where the next page starts.
 */
export function pageStatement(rows: number, filtered: boolean, window = FEED_WINDOW): { name: string; sql: string } {
  const shape = `${rows}:${filtered}:${window}`
  let statement = shapes.get(shape)
  if (!statement) {
    const sql = filtered ? filteredPage(rows, window) : wholePage(rows)
    statement = { name: statementName('events_page', sql), sql }
    shapes.set(shape, statement)
  }
  return statement
}

/** The head of a page: the feed's end below the horizon (`s`) and what was purged. */
const PAGE_HEAD = `h.xid::text AS "endXid", h.n::text AS "endN",
      f.purged_xid::text AS "purgedXid", f.purged_n::text AS "purgedN"`
const PAGE_END = `LEFT JOIN LATERAL (SELECT e.xid, e.n FROM events e WHERE e.tenant_id = $1 AND e.xid < s.horizon
      ORDER BY e.xid DESC, e.n DESC LIMIT 1) h ON true
    LEFT JOIN event_feeds f ON f.tenant_id = $1`
/** The position a page reads after. */
const GIVEN = '($2::bigint, $3::bigint)'

function wholePage(rows: number): string {
  return `SELECT ${PAGE_HEAD}, NULL AS "windowXid", NULL AS "windowN", p.xid, p.n, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT ${HORIZON} AS horizon) s
    ${PAGE_END}
    LEFT JOIN LATERAL (SELECT ${eventRows('', `(${firstEvents('e.*', GIVEN, 's.horizon', rows)}) e`)}) p ON true
    ORDER BY p.xid::bigint NULLS FIRST, p.n::bigint`
}

/**
 * The events of the types `$4` among the next `window` (`kept`): the scan of the window stops as soon as `rows`
 * are found, so a type that is frequent costs what an unfiltered page does. Only a page that found fewer reads where
 * its window ends (`read`), the position its reader goes on from: every event before it was read. The horizon is
 * the statement's one value (`s`, read once), not a join for each event.
 */
function filteredPage(rows: number, window: number): string {
  const horizon = '(SELECT horizon FROM s)'
  return `WITH s AS (SELECT ${HORIZON} AS horizon),
    kept AS (SELECT w.* FROM (${firstEvents('e.*', GIVEN, horizon, window)}) w
      WHERE w.type = ANY($4::text[]::event_type[]) ORDER BY w.xid, w.n LIMIT ${rows}),
    read AS (${windowEnd(GIVEN, horizon, window, `(SELECT count(*) FROM kept) < ${rows}`)})
    SELECT ${PAGE_HEAD}, r.xid::text AS "windowXid", r.n::text AS "windowN",
      p.xid, p.n, p.id, p.type, p."occurredAt", p.data
    FROM s
    ${PAGE_END}
    LEFT JOIN read r ON true
    LEFT JOIN LATERAL (SELECT ${eventRows('', 'kept e')}) p ON true
    ORDER BY p.xid::bigint NULLS FIRST, p.n::bigint`
}

/**
 * Where a purge of the tenant `$1` stops: the first event, in the order of positions, still within the retention
 * (`$2` days). Every event before it is older than the retention.
 */
export const FIRST_KEPT_SQL = `SELECT xid::text AS xid, n::text AS n FROM events
  WHERE tenant_id = $1 AND occurred_at >= now() - make_interval(days => $2) ORDER BY xid, n LIMIT 1`

/**
 * Deletes up to `$4` of the tenant's events before position ($2, $3) (all of them when `$2` is null), oldest
 * first, and only those older than the retention (`$5` days): whatever happened since the first kept position was
 * read (a tenant's first events committed meanwhile), no recent event goes. Answers how many, and the position of
 * the last.
 */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM events e WHERE e.tenant_id = $1 AND (e.xid, e.n) IN (
      SELECT xid, n FROM events WHERE tenant_id = $1
        AND ($2::bigint IS NULL OR (xid, n) < ($2::bigint, $3::bigint))
        AND occurred_at < now() - make_interval(days => $5::int)
      ORDER BY xid, n LIMIT $4)
    RETURNING e.xid, e.n)
  SELECT count(*)::int AS deleted, max(xid)::text AS xid,
    (SELECT max(n) FROM doomed WHERE xid = (SELECT max(xid) FROM doomed))::text AS n
  FROM doomed`

/** Records that the tenant's events up to ($2, $3) are gone. */
export const PURGED_SQL = `INSERT INTO event_feeds (tenant_id, purged_xid, purged_n) VALUES ($1, $2, $3)
  ON CONFLICT (tenant_id) DO UPDATE SET purged_xid = EXCLUDED.purged_xid, purged_n = EXCLUDED.purged_n
  WHERE (event_feeds.purged_xid, event_feeds.purged_n) < (EXCLUDED.purged_xid, EXCLUDED.purged_n)`
