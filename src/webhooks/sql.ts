// The SQL of webhooks: their management (always by tenant), the deliveries log, and what the deliverer works from
// (src/webhooks/deliverer.ts): each webhook follows its tenant's event feed from a position of its own, and an
// event it failed to take waits in delivery_retries. Every statement on a tenant's rows names the tenant.
import { isoUtc, isoUtcReturned } from '../db/iso-time.js'
import { eventRows, POSITIONED, windowEnd } from '../events/sql.js'

/** A Webhook, as the API shows it (never its secret), its timestamp formatted by `timestamp`. */
const webhookColumns = (timestamp: (expression: string) => string) => `w.id, w.url, w.events::text[] AS events,
  w.description, ${timestamp('w.created_at')} AS "createdAt"`
const WEBHOOK = webhookColumns(isoUtc)

/** Taken before counting a tenant's webhooks, so that concurrent creates cannot pass the limit together. */
export const LOCK_TENANT_SQL = 'SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE'
export const COUNT_SQL = 'SELECT count(*)::int AS count FROM webhooks WHERE tenant_id = $1'
export const CREATE_SQL = `INSERT INTO webhooks AS w (tenant_id, id, url, events, description, secret)
  VALUES ($1, gen_random_uuid(), $2, $3::text[]::event_type[], $4, $5)
  RETURNING ${webhookColumns(isoUtcReturned)}`
/** A new webhook's place in the feed: it takes the events that follow ($3, $4). */
export const CURSOR_SQL = `INSERT INTO webhook_cursors (tenant_id, webhook_id, seq, n)
  VALUES ($1, $2, $3::bigint, $4::bigint)`
export const LIST_SQL = `SELECT ${WEBHOOK} FROM webhooks w WHERE w.tenant_id = $1 ORDER BY w.created_at, w.id`
export const GET_SQL = `SELECT ${WEBHOOK} FROM webhooks w WHERE w.tenant_id = $1 AND w.id = $2`
export const DELETE_SQL = 'DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING id'

/** The last 100 attempts of a webhook, newest first. */
export const DELIVERIES_SQL = `SELECT a.event_id AS "eventId", a.attempt, a.status, a.error, a.duration_ms AS "durationMs",
    ${isoUtc('a.at')} AS at, a.outcome::text AS outcome
  FROM delivery_attempts a
  WHERE a.tenant_id = $1 AND a.webhook_id = $2
  ORDER BY a.at DESC, a.event_id DESC, a.attempt DESC LIMIT 100`

/**
 * Every tenant's webhooks, where each deliverer starts from: the one statement that reads across tenants, on a
 * table that a distributed PostgreSQL keeps whole on every node (a reference table).
 */
export const DIRECTORY_SQL = `SELECT tenant_id AS "tenantId", id, url, events::text[] AS events, secret FROM webhooks`

/** How many events one look at a webhook reads at most, its types or not. */
export const LOOK_WINDOW = 1000

/**
 * What a webhook ($1 tenant, $2 webhook) has to do, without taking it: its position and whether another instance
 * holds it, the position of the last of the next LOOK_WINDOW events (null when none follows), then up to $4
 * events of the types $3 among those, and up to $5 of its retries due now, with their events (null data when the
 * event is no longer kept). Always one row at least (the position's).
 */
export const LOOK_SQL = `SELECT k.seq::text AS "cursorSeq", k.n::text AS "cursorN",
    (k.leased_until IS NOT NULL AND k.leased_until >= now()) AS leased,
    b.seq::text AS "windowSeq", b.n::text AS "windowN",
    p.retry, p."retryEventId", p.attempts, p.seq, p.n, p.id, p.type, p."occurredAt", p.data
  FROM webhook_cursors k
  LEFT JOIN LATERAL (${windowEnd({ seq: 'k.seq', n: 'k.n' }, LOOK_WINDOW)}) b ON true
  LEFT JOIN LATERAL (
    (SELECT false AS retry, NULL::uuid AS "retryEventId", 0 AS attempts, ${eventRows(
      `WHERE e.seq <= b.seq AND (e.seq, e.n) <= (b.seq, b.n) AND e.type = ANY($3::text[]::event_type[])
        ORDER BY e.seq, e.n LIMIT $4`,
      `(${POSITIONED({ seq: 'k.seq', n: 'k.n' }, '$4')}) e`,
    )}
      ORDER BY e.seq, e.n)
    UNION ALL
    (SELECT true, r.event_id, r.attempts, x.* FROM delivery_retries r
      LEFT JOIN LATERAL (SELECT ${eventRows('WHERE e.tenant_id = $1 AND e.id = r.event_id')}) x ON true
      WHERE r.tenant_id = $1 AND r.webhook_id = $2 AND r.next_attempt_at <= now()
      ORDER BY r.next_attempt_at LIMIT $5)
  ) p ON true
  WHERE k.tenant_id = $1 AND k.webhook_id = $2`

/**
 * Moves the webhook past events none of which is of its types, to ($5, $6), if no instance holds it and its
 * position is still the one looked at ($3, $4).
 */
export const SKIP_SQL = `UPDATE webhook_cursors SET seq = $5::bigint, n = $6::bigint
  WHERE tenant_id = $1 AND webhook_id = $2 AND seq = $3::bigint AND n = $4::bigint
    AND (leased_until IS NULL OR leased_until < now())`

/**
 * Takes the webhook for this instance until `$5` seconds from now, if no other instance holds it and its
 * position is still the one looked at ($3, $4): another instance may have moved it meanwhile.
 */
export const LEASE_SQL = `UPDATE webhook_cursors SET leased_until = now() + make_interval(secs => $5), lease_id = $6
  WHERE tenant_id = $1 AND webhook_id = $2 AND seq = $3::bigint AND n = $4::bigint
    AND (leased_until IS NULL OR leased_until < now())
  RETURNING lease_id`

/** Moves the webhook past the events handed over ($3, $4) and lets it go, under this instance's lease ($5) only. */
export const ADVANCE_SQL = `UPDATE webhook_cursors SET seq = $3::bigint, n = $4::bigint, leased_until = NULL,
    lease_id = NULL
  WHERE tenant_id = $1 AND webhook_id = $2 AND lease_id = $5
  RETURNING 1`

/** Lets the webhook go without moving it, under this instance's lease ($3) only. */
export const RELEASE_SQL = `UPDATE webhook_cursors SET leased_until = NULL, lease_id = NULL
  WHERE tenant_id = $1 AND webhook_id = $2 AND lease_id = $3`

/**
 * Records the attempts of a round: arrays of event id, attempt, status, error, duration, outcome and start. The
 * webhook's own row in webhook_cursors gives the tenant and the webhook: Citus runs an INSERT … SELECT on one node,
 * as one statement, when it selects from a table distributed as the target is.
 */
export const ATTEMPTS_SQL = `INSERT INTO delivery_attempts
    (tenant_id, webhook_id, event_id, attempt, status, error, duration_ms, outcome, at)
  SELECT k.tenant_id, k.webhook_id, a.event_id, a.attempt, a.status, a.error, a.duration_ms, a.outcome, a.at
  FROM webhook_cursors k,
    unnest($3::uuid[], $4::int[], $5::int[], $6::text[], $7::int[], $8::text[]::delivery_outcome[], $9::timestamptz[])
    AS a(event_id, attempt, status, error, duration_ms, outcome, at)
  WHERE k.tenant_id = $1 AND k.webhook_id = $2
  ON CONFLICT DO NOTHING`

/** Which of the events `$2` of the tenant hold no contact any more: their contact was erased. */
export const ERASED_EVENTS_SQL = `SELECT e.id FROM events e
  WHERE e.tenant_id = $1 AND e.id = ANY($2::uuid[]) AND e.contact IS NULL`

/** Events due again: arrays of event id, attempts made, and seconds until the next one (as ATTEMPTS_SQL). */
export const RETRY_SQL = `INSERT INTO delivery_retries (tenant_id, webhook_id, event_id, attempts, next_attempt_at)
  SELECT k.tenant_id, k.webhook_id, r.event_id, r.attempts, now() + make_interval(secs => r.delay)
  FROM webhook_cursors k, unnest($3::uuid[], $4::int[], $5::float8[]) AS r(event_id, attempts, delay)
  WHERE k.tenant_id = $1 AND k.webhook_id = $2
  ON CONFLICT (tenant_id, webhook_id, event_id)
  DO UPDATE SET attempts = EXCLUDED.attempts, next_attempt_at = EXCLUDED.next_attempt_at`

/** Retries that are over (delivered, or given up): the event ids $3. */
export const RETRIES_DONE_SQL = `DELETE FROM delivery_retries
  WHERE tenant_id = $1 AND webhook_id = $2 AND event_id = ANY($3::uuid[])`

/** One tenant's ($1) attempts older than the events' retention ($2 days), at most $3 of them. */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM delivery_attempts WHERE tenant_id = $1 AND (webhook_id, event_id, attempt) IN (
      SELECT webhook_id, event_id, attempt FROM delivery_attempts
      WHERE tenant_id = $1 AND at < now() - make_interval(days => $2) LIMIT $3)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM doomed`
