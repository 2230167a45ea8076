// The SQL of webhooks: their management (always by tenant), the deliveries log, and the queue the deliverer
// works from (src/webhooks/deliverer.ts). Deliveries are written by the events trigger, with the change.
import { isoUtc } from '../db/iso-time.js'

/** A Webhook, as the API shows it (never its secret). */
const WEBHOOK = `w.id, w.url, w.events::text[] AS events, w.description,
  ${isoUtc('w.created_at')} AS "createdAt"`

/** Taken before counting a tenant's webhooks, so that concurrent creates cannot pass the limit together. */
export const LOCK_TENANT_SQL = 'SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE'
export const CREATE_SQL = `INSERT INTO webhooks AS w (tenant_id, id, url, events, description, secret)
  SELECT $1, gen_random_uuid(), $2, $3::text[]::event_type[], $4, $5
  WHERE (SELECT count(*) FROM webhooks WHERE tenant_id = $1) < $6
  RETURNING ${WEBHOOK}`
export const LIST_SQL = `SELECT ${WEBHOOK} FROM webhooks w WHERE w.tenant_id = $1 ORDER BY w.created_at, w.id`
export const GET_SQL = `SELECT ${WEBHOOK} FROM webhooks w WHERE w.tenant_id = $1 AND w.id = $2`
export const DELETE_SQL = 'DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING id'

/** The last 100 attempts of a webhook, newest first. */
export const DELIVERIES_SQL = `SELECT a.event_id AS "eventId", a.attempt, a.status, a.error, a.duration_ms AS "durationMs",
    ${isoUtc('a.at')} AS at,
    CASE WHEN a.error IS NULL THEN 'delivered'
      WHEN d.state = 'failed' AND a.attempt = d.attempts THEN 'given_up' ELSE 'retried' END AS outcome
  FROM delivery_attempts a JOIN deliveries d
    ON d.tenant_id = a.tenant_id AND d.webhook_id = a.webhook_id AND d.event_seq = a.event_seq
  WHERE a.tenant_id = $1 AND a.webhook_id = $2
  ORDER BY a.at DESC, a.event_seq DESC, a.attempt DESC LIMIT 100`

/**
 * Takes due deliveries for this instance: at most `$1` per webhook, of webhooks no instance is delivering to
 * right now (looked at among the 2,000 due the longest, so that a claim costs the same whatever the backlog), each leased until `$2` seconds from now and its attempt counted. The conditions are checked again
 * on each row once it is locked (SKIP LOCKED passes over rows another instance holds), so two instances never
 * take the same attempt.
 */
export const CLAIM_SQL = `WITH busy AS (
    SELECT DISTINCT tenant_id, webhook_id FROM deliveries
    WHERE state = 'pending' AND leased_until IS NOT NULL AND leased_until >= now()),
  oldest AS (
    SELECT d.tenant_id, d.webhook_id, d.event_seq FROM deliveries d
    WHERE d.state = 'pending' AND d.next_attempt_at <= now()
      AND (d.leased_until IS NULL OR d.leased_until < now())
      AND NOT EXISTS (SELECT 1 FROM busy WHERE busy.tenant_id = d.tenant_id AND busy.webhook_id = d.webhook_id)
    ORDER BY d.next_attempt_at LIMIT 2000),
  due AS (
    SELECT o.*, row_number() OVER (PARTITION BY o.tenant_id, o.webhook_id ORDER BY o.event_seq) AS k FROM oldest o),
  taken AS (
    SELECT d.tenant_id, d.webhook_id, d.event_seq FROM deliveries d
    JOIN due ON due.tenant_id = d.tenant_id AND due.webhook_id = d.webhook_id AND due.event_seq = d.event_seq
    WHERE due.k <= $1 AND d.state = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
    FOR UPDATE OF d SKIP LOCKED)
  UPDATE deliveries d SET attempts = d.attempts + 1, leased_until = now() + make_interval(secs => $2)
  FROM taken t WHERE d.tenant_id = t.tenant_id AND d.webhook_id = t.webhook_id AND d.event_seq = t.event_seq
  RETURNING d.tenant_id AS "tenantId", d.webhook_id AS "webhookId", d.event_seq::text AS "eventSeq",
    d.event_id AS "eventId", d.attempts AS attempt`

/** Where the deliveries of a batch go: each webhook's URL and sealed secret. */
export const TARGETS_SQL = `SELECT tenant_id AS "tenantId", id, url, secret FROM webhooks
  WHERE (tenant_id, id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))`

/**
 * Records an attempt and what follows it: delivered, failed for good, or due again after `$6` seconds. Only the
 * lease's own attempt is recorded: a delivery taken over after its lease ran out, or deleted with its webhook,
 * records nothing.
 */
export const RECORD_SQL = `WITH d AS (
    UPDATE deliveries SET state = $5::delivery_state, leased_until = NULL,
      next_attempt_at = CASE WHEN $6::float8 IS NULL THEN next_attempt_at ELSE now() + make_interval(secs => $6) END
    WHERE tenant_id = $1 AND webhook_id = $2 AND event_seq = $3::bigint AND attempts = $4
    RETURNING tenant_id, webhook_id, event_seq, event_id)
  INSERT INTO delivery_attempts (tenant_id, webhook_id, event_seq, attempt, event_id, status, error, duration_ms, at)
  SELECT tenant_id, webhook_id, event_seq, $4, event_id, $7, $8, $9, $10 FROM d`

/** A delivery taken by an instance that cannot sign it, given back as if never taken. */
export const GIVE_BACK_SQL = `UPDATE deliveries SET attempts = attempts - 1, leased_until = NULL
  WHERE tenant_id = $1 AND webhook_id = $2 AND event_seq = $3::bigint AND attempts = $4`

/** Deliveries (and their attempts) older than the events' retention. */
export const PURGE_SQL = `WITH doomed AS (
    DELETE FROM deliveries WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM deliveries WHERE created_at < now() - make_interval(days => $1) AND state <> 'pending' LIMIT $2))
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM doomed`
