// The event feed's SQL. A page is read in one statement, so that the tenant's counter and its events come from one
// snapshot: every event numbered up to the counter's committed value is visible in it (a tenant's events commit
// in the order of their numbers, see the events migration). The contact of each event is its stored row made a
// `contacts` record again and read with the very select list GET uses.
import { selectContact } from '../contacts/sql.js'
import { isoUtc } from '../db/iso-time.js'
import { statementName } from '../db/statement-name.js'

/**
 * Events (`events e`) as the feed and webhooks show them, select list and FROM: position, id, type, time, and the
 * contact made a `contacts` record again and read with GET's select list, as JSON.
 */
const EVENT_ROWS = `e.seq::text AS position, e.id, e.type::text AS type,
        ${isoUtc('e.occurred_at')} AS "occurredAt",
        (SELECT row_to_json(x) FROM (SELECT ${selectContact('c', "COALESCE(e.tags, '{}')")}) x) AS data
      FROM events e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c`

/** Events of a tenant by their numbers (`$2`, an array), for the deliveries of a batch. */
export const EVENTS_BY_POSITION_SQL = `SELECT ${EVENT_ROWS}
  WHERE e.tenant_id = $1 AND e.seq = ANY($2::bigint[])`

/** One statement per shape (with or without a type filter, a page size), named from its text. */
const shapes = new Map<string, { name: string; sql: string }>()

/**
 * The counter (last number, purged-through number) and up to `rows` events after `$2`, oldest first: always one
 * row at least (the counter's, with null event columns when there is no event).
 */
export function pageStatement(rows: number, filtered: boolean): { name: string; sql: string } {
  const shape = `${rows}:${filtered}`
  let statement = shapes.get(shape)
  if (!statement) {
    const sql = `SELECT k.last_seq::text AS "lastSeq", k.purged_through::text AS "purgedThrough",
      p.position, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT COALESCE(max(last_seq), 0) AS last_seq, COALESCE(max(purged_through), 0) AS purged_through
      FROM event_counters WHERE tenant_id = $1) k
    LEFT JOIN LATERAL (
      SELECT e.seq, ${EVENT_ROWS}
      WHERE e.tenant_id = $1 AND e.seq > $2::bigint${filtered ? ' AND e.type = $3::event_type' : ''}
      ORDER BY e.seq LIMIT ${rows}) p ON true
    ORDER BY p.seq NULLS FIRST`
    statement = { name: statementName('events_page', sql), sql }
    shapes.set(shape, statement)
  }
  return statement
}

/**
 * Deletes events older than the retention, at most `batch` at a time, and records per tenant the highest number
 * deleted (a position before it is gone). Numbers grow with occurred_at within a tenant (both are taken under the
 * tenant's counter lock), so what remains of a tenant is always a suffix of its sequence.
 */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM events WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM events WHERE occurred_at < now() - make_interval(days => $1) LIMIT $2))
    RETURNING tenant_id, seq),
  highest AS (SELECT tenant_id, max(seq) AS seq FROM doomed GROUP BY tenant_id),
  moved AS (UPDATE event_counters c SET purged_through = GREATEST(c.purged_through, h.seq)
    FROM highest h WHERE c.tenant_id = h.tenant_id RETURNING 1)
  SELECT (SELECT count(*) FROM doomed)::int AS deleted`
