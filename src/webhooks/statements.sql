-- The statements the service sends: written by `npm run sql:write` from src/webhooks/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- ADVANCE_SQL
UPDATE webhook_cursors SET seq = $3::bigint, n = $4::bigint, leased_until = NULL,
    lease_id = NULL
  WHERE tenant_id = $1 AND webhook_id = $2 AND lease_id = $5
  RETURNING 1;

-- ATTEMPTS_SQL
INSERT INTO delivery_attempts
    (tenant_id, webhook_id, event_id, attempt, status, error, duration_ms, outcome, at)
  SELECT k.tenant_id, k.webhook_id, a.event_id, a.attempt, a.status, a.error, a.duration_ms, a.outcome, a.at
  FROM webhook_cursors k,
    unnest($3::uuid[], $4::int[], $5::int[], $6::text[], $7::int[], $8::text[]::delivery_outcome[], $9::timestamptz[])
    AS a(event_id, attempt, status, error, duration_ms, outcome, at)
  WHERE k.tenant_id = $1 AND k.webhook_id = $2
  ON CONFLICT DO NOTHING;

-- COUNT_SQL
SELECT count(*)::int AS count FROM webhooks WHERE tenant_id = $1;

-- CREATE_SQL
INSERT INTO webhooks AS w (tenant_id, id, url, events, description, secret)
  VALUES ($1, gen_random_uuid(), $2, $3::text[]::event_type[], $4, $5)
  RETURNING w.id, w.url, w.events::text[] AS events,
  w.description, iso_utc(w.created_at) AS "createdAt";

-- CURSOR_SQL
INSERT INTO webhook_cursors (tenant_id, webhook_id, seq, n)
  VALUES ($1, $2, $3::bigint, $4::bigint);

-- DELETE_SQL
DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING id;

-- DELIVERIES_SQL
SELECT a.event_id AS "eventId", a.attempt, a.status, a.error, a.duration_ms AS "durationMs",
    to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, a.outcome::text AS outcome
  FROM delivery_attempts a
  WHERE a.tenant_id = $1 AND a.webhook_id = $2
  ORDER BY a.at DESC, a.event_id DESC, a.attempt DESC LIMIT 100;

-- DIRECTORY_SQL
SELECT tenant_id AS "tenantId", id, url, events::text[] AS events, secret FROM webhooks;

-- ERASED_EVENTS_SQL
SELECT e.id FROM events e
  WHERE e.tenant_id = $1 AND e.id = ANY($2::uuid[]) AND e.contact IS NULL;

-- GET_SQL
SELECT w.id, w.url, w.events::text[] AS events,
  w.description, to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt" FROM webhooks w WHERE w.tenant_id = $1 AND w.id = $2;

-- LEASE_SQL
UPDATE webhook_cursors SET leased_until = now() + make_interval(secs => $5), lease_id = $6
  WHERE tenant_id = $1 AND webhook_id = $2 AND seq = $3::bigint AND n = $4::bigint
    AND (leased_until IS NULL OR leased_until < now())
  RETURNING lease_id;

-- LIST_SQL
SELECT w.id, w.url, w.events::text[] AS events,
  w.description, to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt" FROM webhooks w WHERE w.tenant_id = $1 ORDER BY w.created_at, w.id;

-- LOCK_TENANT_SQL
SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE;

-- LOOK_SQL
SELECT k.seq::text AS "cursorSeq", k.n::text AS "cursorN",
    (k.leased_until IS NOT NULL AND k.leased_until >= now()) AS leased,
    b.seq::text AS "windowSeq", b.n::text AS "windowN",
    p.retry, p."retryEventId", p.attempts, p.seq, p.n, p.id, p.type, p."occurredAt", p.data
  FROM webhook_cursors k
  LEFT JOIN LATERAL (SELECT w.seq, w.n FROM (SELECT e.seq, e.n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn AND e.n > CASE WHEN t.seq = k.seq THEN k.n ELSE 0 END ORDER BY e.n LIMIT 1000) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL AND t.seq >= k.seq) e ORDER BY e.seq, e.n LIMIT 1000) w
      WHERE true ORDER BY w.seq DESC, w.n DESC LIMIT 1) b ON true
  LEFT JOIN LATERAL (
    (SELECT false AS retry, NULL::uuid AS "retryEventId", 0 AS attempts, e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) END AS data
      FROM (SELECT * FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn AND e.n > CASE WHEN t.seq = k.seq THEN k.n ELSE 0 END ORDER BY e.n LIMIT $4) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL AND t.seq >= k.seq) e WHERE e.seq <= b.seq AND (e.seq, e.n) <= (b.seq, b.n) AND e.type = ANY($3::text[]::event_type[])
        ORDER BY e.seq, e.n LIMIT $4) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c
      ORDER BY e.seq, e.n)
    UNION ALL
    (SELECT true, r.event_id, r.attempts, x.* FROM delivery_retries r
      LEFT JOIN LATERAL (SELECT e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) END AS data
      FROM (SELECT * FROM (SELECT k.seq, e.* FROM events e
        LEFT JOIN event_commits k ON k.tenant_id = e.tenant_id AND k.txn = e.txn) e WHERE e.tenant_id = $1 AND e.id = r.event_id) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c) x ON true
      WHERE r.tenant_id = $1 AND r.webhook_id = $2 AND r.next_attempt_at <= now()
      ORDER BY r.next_attempt_at LIMIT $5)
  ) p ON true
  WHERE k.tenant_id = $1 AND k.webhook_id = $2;

-- PURGE_SQL
WITH doomed AS (
    DELETE FROM delivery_attempts WHERE tenant_id = $1 AND (webhook_id, event_id, attempt) IN (
      SELECT webhook_id, event_id, attempt FROM delivery_attempts
      WHERE tenant_id = $1 AND at < now() - make_interval(days => $2) LIMIT $3)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM doomed;

-- RELEASE_SQL
UPDATE webhook_cursors SET leased_until = NULL, lease_id = NULL
  WHERE tenant_id = $1 AND webhook_id = $2 AND lease_id = $3;

-- RETRIES_DONE_SQL
DELETE FROM delivery_retries
  WHERE tenant_id = $1 AND webhook_id = $2 AND event_id = ANY($3::uuid[]);

-- RETRY_SQL
INSERT INTO delivery_retries (tenant_id, webhook_id, event_id, attempts, next_attempt_at)
  SELECT k.tenant_id, k.webhook_id, r.event_id, r.attempts, now() + make_interval(secs => r.delay)
  FROM webhook_cursors k, unnest($3::uuid[], $4::int[], $5::float8[]) AS r(event_id, attempts, delay)
  WHERE k.tenant_id = $1 AND k.webhook_id = $2
  ON CONFLICT (tenant_id, webhook_id, event_id)
  DO UPDATE SET attempts = EXCLUDED.attempts, next_attempt_at = EXCLUDED.next_attempt_at;

-- SKIP_SQL
UPDATE webhook_cursors SET seq = $5::bigint, n = $6::bigint
  WHERE tenant_id = $1 AND webhook_id = $2 AND seq = $3::bigint AND n = $4::bigint
    AND (leased_until IS NULL OR leased_until < now());
