// The event feed's SQL. A tenant's events are ordered by position (seq, n): the number its transaction took in the
// tenant's feed (event_commits.seq) and the event's number within that transaction. A transaction takes its number
// once it is found committed, by the first reader after that (SEQUENCE_SQL), so no event can later appear before a
// position already served, and what a reader waits for is its own tenant's writes alone
// (docs/decisions/0009-feed-positions-as-data.md). The contact of each event is its stored row made a `contacts`
// record again and read with the very select list GET uses. Every statement names its tenant, so that a
// distributed PostgreSQL runs it on the tenant's node.
import { selectContact } from '../contacts/sql.js'
import { isoUtc } from '../db/iso-time.js'
import { statementName } from '../db/statement-name.js'
import { type Event, FEED_WINDOW } from './model.js'

/**
 * Numbers the tenant's ($1) committed transactions that have no position yet, after its feed's last number, in
 * the order of their last event's clock: a transaction that changed a contact after another committed its change
 * of it wrote its events later, so it follows. The clock is kept to the microsecond; where it ticks coarser (the
 * embedded database's keeps milliseconds), a tie goes to the transaction that took its id first (the xmin of its
 * event_commits row, which nothing updates before it is numbered): there one connection runs one transaction at a
 * time, so that is the order they committed in. Under the lock of the tenant's event_feeds row, taken only when
 * such a transaction exists: two readers number in turn; one that waited skips what the other numbered (the
 * UPDATE reads each row again), and numbers after it. Gaps between numbers mean nothing. The tenant's feed row
 * is made with the tenant, or by its first transaction (feed_txn()). Answers how many it numbered (no row: none).
 */
export const SEQUENCE_SQL = `WITH feed AS (
    SELECT f.last_seq FROM event_feeds f
    WHERE f.tenant_id = $1 AND EXISTS (SELECT 1 FROM event_commits k WHERE k.tenant_id = $1 AND k.seq IS NULL)
    FOR NO KEY UPDATE),
  pending AS (
    SELECT k.txn, row_number() OVER (ORDER BY (SELECT e.occurred_at FROM events e
        WHERE e.tenant_id = $1 AND e.txn = k.txn ORDER BY e.n DESC LIMIT 1), k.xmin::text::bigint, k.txn) AS i
    FROM event_commits k WHERE k.tenant_id = $1 AND k.seq IS NULL AND EXISTS (SELECT 1 FROM feed)),
  numbered AS (
    UPDATE event_commits k SET seq = (SELECT last_seq FROM feed) + p.i FROM pending p
    WHERE k.tenant_id = $1 AND k.txn = p.txn AND k.seq IS NULL
    RETURNING k.seq)
  UPDATE event_feeds f SET last_seq = GREATEST(f.last_seq, (SELECT max(seq) FROM numbered))
  WHERE f.tenant_id = $1 AND EXISTS (SELECT 1 FROM numbered)
  RETURNING (SELECT count(*)::int FROM numbered) AS numbered`

/**
 * The tenant's events with their positions (`seq` beside each event's columns), from `after` (none: all of them):
 * each numbered transaction's events looked up by its number, in their order, `count` at most (SQL; none: all),
 * last first with `last`. A lateral subquery with its own LIMIT, so that a transaction's events are looked up for
 * it alone, and an ordering by (seq, n) over them sorts at most `count` of one transaction's events, not all.
 */
export const POSITIONED = (after?: After, count?: string, last = false) => `SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn${
        after ? ` AND e.n > CASE WHEN t.seq = ${after.seq} THEN ${after.n} ELSE 0 END` : ''
      } ORDER BY e.n${last ? ' DESC' : ''}${count ? ` LIMIT ${count}` : ' OFFSET 0'}) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL${after ? ` AND t.seq >= ${after.seq}` : ''}`

/** Every event with its transaction's number, null while it has none: where `eventRows` picks by default. */
const NUMBERED = `(SELECT k.seq, e.* FROM events e
        LEFT JOIN event_commits k ON k.tenant_id = e.tenant_id AND k.txn = e.txn) e`

/**
 * Events as the feed and webhooks show them, select list and FROM, over the events that `pick` (a WHERE, and an
 * ORDER BY and LIMIT if any, over `source`, every event by default) chooses: position, id, type, time, and the contact made a `contacts`
 * record again and read with GET's select list, as JSON; an erased contact's events hold no contact, and show its
 * id alone, with `erased: true` (ErasedContact). The events are chosen in a subquery of their own, so that the JSON
 * is built for the rows kept alone: in one level, a plan that sorts (chosen when the table's statistics are older
 * than a large import) builds it for every event after the position before its LIMIT keeps a page of them.
 */
export function eventRows(pick: string, source = NUMBERED): string {
  return `e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        ${isoUtc('e.occurred_at')} AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT ${selectContact('c')}) x) END AS data
      FROM (SELECT * FROM ${source} ${pick}) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c`
}

/** The columns eventRows selects, each null in a row that an outer join left without an event. */
export interface EventColumns {
  seq: string | null
  n: string | null
  id: string | null
  type: Event['type'] | null
  occurredAt: string | null
  data: Event['data'] | null
}

/** The tenant's feed end: its last event's position (no row without one). */
export const END_SQL = `SELECT e.seq::text AS seq, e.n::text AS n FROM (${POSITIONED(undefined, '1', true)}) e
  ORDER BY e.seq DESC, e.n DESC LIMIT 1`

/** One statement per shape (a page size, with or without a type filter), named from its text. */
const shapes = new Map<string, { name: string; sql: string }>()

/** A position as SQL: its transaction's number and the event's. */
export interface After {
  seq: string
  n: string
}

/** `columns` of the tenant's first `count` events after `after`, in the order of positions, as `e`. */
function firstEvents(columns: string, after: After, count: number): string {
  return `SELECT ${columns} FROM (${POSITIONED(after, String(count))}) e ORDER BY e.seq, e.n LIMIT ${count}`
}

/**
 * The position of the last of the (up to) `window` events after `after`: where a scan for some types stops in one
 * statement. No row when no event follows, or when `when` (SQL, evaluated once) is false: then the window is not
 * read.
 */
export function windowEnd(after: After, window: number, when = 'true'): string {
  return `SELECT w.seq, w.n FROM (${firstEvents('e.seq, e.n', after, window)}) w
      WHERE ${when} ORDER BY w.seq DESC, w.n DESC LIMIT 1`
}

/**
 * The feed's end (the last event's position, null without one), what the retention purged (null if nothing), and
 * up to `rows` events after ($2, $3), oldest first: always one row at least, with null event columns when there is
 * no event. `filtered`: only events of the types `$4` (an array), among the next `window`
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

/** The head of a page: the feed's end and what was purged. */
const PAGE_HEAD = `h.seq::text AS "endSeq", h.n::text AS "endN",
      f.purged_seq::text AS "purgedSeq", f.purged_n::text AS "purgedN"`
const PAGE_END = `LEFT JOIN LATERAL (${END_SQL}) h ON true
    LEFT JOIN event_feeds f ON f.tenant_id = $1`
/** The position a page reads after. */
const GIVEN: After = { seq: '$2::bigint', n: '$3::bigint' }

function wholePage(rows: number): string {
  return `SELECT ${PAGE_HEAD}, NULL AS "windowSeq", NULL AS "windowN", p.seq, p.n, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT 1) s
    ${PAGE_END}
    LEFT JOIN LATERAL (SELECT ${eventRows('', `(${firstEvents('e.*', GIVEN, rows)}) e`)}) p ON true
    ORDER BY p.seq::bigint NULLS FIRST, p.n::bigint`
}

/**
 * The events of the types `$4` among the next `window` (`kept`): the scan of the window stops as soon as `rows`
 * are found, so a type that is frequent costs what an unfiltered page does. Only a page that found fewer reads where
 * its window ends (`read`), the position its reader goes on from: every event before it was read.
 */
function filteredPage(rows: number, window: number): string {
  return `WITH kept AS (SELECT w.* FROM (${firstEvents('e.*', GIVEN, window)}) w
      WHERE w.type = ANY($4::text[]::event_type[]) ORDER BY w.seq, w.n LIMIT ${rows}),
    read AS (${windowEnd(GIVEN, window, `(SELECT count(*) FROM kept) < ${rows}`)})
    SELECT ${PAGE_HEAD}, r.seq::text AS "windowSeq", r.n::text AS "windowN",
      p.seq, p.n, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT 1) s
    ${PAGE_END}
    LEFT JOIN read r ON true
    LEFT JOIN LATERAL (SELECT ${eventRows('', 'kept e')}) p ON true
    ORDER BY p.seq::bigint NULLS FIRST, p.n::bigint`
}

/**
 * Where a purge of the tenant `$1` stops: the first event, in the order of positions, still within the retention
 * (`$2` days). Every event before it is older than the retention.
 */
export const FIRST_KEPT_SQL = `SELECT e.seq::text AS seq, e.n::text AS n FROM (${POSITIONED()}) e
  WHERE e.occurred_at >= now() - make_interval(days => $2) ORDER BY e.seq, e.n LIMIT 1`

/**
 * Deletes up to `$4` of the tenant's events before position ($2, $3) (all of them when `$2` is null), oldest
 * first, and only those older than the retention (`$5` days): whatever happened since the first kept position was
 * read (a tenant's first events committed meanwhile), no recent event goes. Answers how many, and the position of
 * the last.
 */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM events d USING event_commits k
    WHERE d.tenant_id = $1 AND k.tenant_id = $1 AND k.txn = d.txn AND (d.txn, d.n) IN (
      SELECT e.txn, e.n FROM (${POSITIONED()}) e
      WHERE ($2::bigint IS NULL OR (e.seq, e.n) < ($2::bigint, $3::bigint))
        AND e.occurred_at < now() - make_interval(days => $5::int)
      ORDER BY e.seq, e.n LIMIT $4)
    RETURNING k.seq, d.n)
  SELECT count(*)::int AS deleted, max(seq)::text AS seq,
    (SELECT max(n) FROM doomed WHERE seq = (SELECT max(seq) FROM doomed))::text AS n
  FROM doomed`

/** Records that the tenant's events up to ($2, $3) are gone, and forgets the transactions left without events. */
export const PURGED_SQL = `INSERT INTO event_feeds (tenant_id, purged_seq, purged_n) VALUES ($1, $2, $3)
  ON CONFLICT (tenant_id) DO UPDATE SET purged_seq = EXCLUDED.purged_seq, purged_n = EXCLUDED.purged_n
  WHERE (event_feeds.purged_seq, event_feeds.purged_n) < (EXCLUDED.purged_seq, EXCLUDED.purged_n)`

/** The tenant's numbered transactions up to `$2` whose events are all purged. */
export const EMPTY_COMMITS_SQL = `DELETE FROM event_commits k WHERE k.tenant_id = $1 AND k.seq <= $2::bigint
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = $1 AND e.txn = k.txn)`
