-- The statements the service sends: written by `npm run sql:write` from src/privacy/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- ALLOW_SQL
DELETE FROM erased_emails WHERE tenant_id = $1 AND email_hash = $2 RETURNING email_hash;

-- ERASE_SQL
DELETE FROM contacts WHERE tenant_id = $1 AND id = $2
    AND ($3::int[] IS NULL OR version = ANY($3::int[]))
  RETURNING id, email_key AS "emailKey";

-- ERASURES_SQL
SELECT contact_id AS "contactId", to_char(erased_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "erasedAt", key_id AS "keyId",
    source
  FROM erasures WHERE tenant_id = $1 ORDER BY erased_at, contact_id;

-- EXISTS_SQL
SELECT EXISTS (SELECT 1 FROM contacts WHERE tenant_id = $1 AND id = $2) AS found;

-- EXPORT_SQL
SELECT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "exportedAt",
    (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) AS contact,
    COALESCE((SELECT json_agg(json_build_object('id', v.id, 'type', v.type, 'occurredAt', v."occurredAt",
        'data', v.data) ORDER BY v.seq::bigint NULLS LAST, v."occurredAt", v.n::bigint)
      FROM (SELECT e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) END AS data
      FROM (SELECT * FROM (SELECT k.seq, e.* FROM events e
        LEFT JOIN event_commits k ON k.tenant_id = e.tenant_id AND k.txn = e.txn) e WHERE e.tenant_id = $1 AND e.contact_id = $2) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c) v), '[]') AS events,
    COALESCE((SELECT json_agg(json_build_object('webhookId', a.webhook_id, 'receiver', w.url, 'eventId', a.event_id,
        'attempt', a.attempt, 'at', to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'status', a.status, 'outcome', a.outcome)
        ORDER BY a.at, a.event_id, a.attempt)
      FROM delivery_attempts a
      JOIN webhooks w ON w.tenant_id = $1 AND w.id = a.webhook_id
      JOIN events d ON d.tenant_id = $1 AND d.id = a.event_id
      WHERE a.tenant_id = $1 AND d.contact_id = $2), '[]') AS deliveries
  FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2;

-- FORGET_ANSWERS_SQL
DELETE FROM idempotency_keys WHERE tenant_id = $1 AND contact_ids @> ARRAY[$2::uuid];

-- RECORD_SQL
INSERT INTO erasures (tenant_id, contact_id, key_id, source) VALUES ($1, $2, $3, $4)
  ON CONFLICT (tenant_id, contact_id) DO NOTHING;

-- REMEMBER_EMAIL_SQL
INSERT INTO erased_emails (tenant_id, email_hash) VALUES ($1, $2)
  ON CONFLICT (tenant_id, email_hash) DO UPDATE SET erased_at = EXCLUDED.erased_at;
