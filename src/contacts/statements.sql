-- The statements the service sends: written by `npm run sql:write` from src/contacts/sql.ts, src/contacts/erased-emails.ts, src/db/tenant-anchor.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- GET_SQL
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", c.version FROM contacts c WHERE c.tenant_id = $1 AND c.id = $2;

-- BY_EMAIL_KEY_SQL
SELECT id, email_status AS "status" FROM contacts WHERE tenant_id = $1 AND email_key = lower($2);

-- UNKNOWN_TAGS_SQL
SELECT ARRAY(SELECT DISTINCT u COLLATE "C" FROM unnest($2::text[]) u
      WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE t.tenant_id = $1 AND t.name = u) ORDER BY 1) AS names;

-- CREATE_SQL
INSERT INTO contacts AS c (id, tenant_id, email, first_name, last_name, phone, source, consent_type, tags, fields)
  SELECT $9::uuid, a.tenant_id, $2, $3, $4, $5, 'api', $6, $7::text[], $8::jsonb
  FROM event_feeds a
  WHERE a.tenant_id = $1
    AND NOT EXISTS (SELECT 1 FROM erased_emails x
      WHERE x.tenant_id = $1 AND ($10::bpchar IS NULL OR x.email_hash = $10::bpchar))
    AND NOT EXISTS (SELECT 1 FROM contacts e WHERE e.tenant_id = $1 AND e.email_key = lower($2::text))
  ON CONFLICT DO NOTHING
  RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ firstName })
UPDATE contacts c SET first_name = $3, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.first_name, 0)
      IS DISTINCT FROM ($3, 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ lastName })
UPDATE contacts c SET last_name = $3, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.last_name, 0)
      IS DISTINCT FROM ($3, 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ emailStatus })
UPDATE contacts c SET email_status = $3::email_status, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.email_status, 0)
      IS DISTINCT FROM ($3::email_status, 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ stage })
UPDATE contacts c SET stage = $3::stage, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.stage, 0)
      IS DISTINCT FROM ($3::stage, 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ consentType })
UPDATE contacts c SET consent_type = $3, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.consent_type, 0)
      IS DISTINCT FROM ($3, 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ fields })
UPDATE contacts c SET fields = jsonb_strip_nulls(c.fields || $3::jsonb), updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.fields, 0)
      IS DISTINCT FROM (jsonb_strip_nulls(c.fields || $3::jsonb), 0) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- updateStatement({ stage }, If-Match)
UPDATE contacts c SET stage = $3::stage, updated_at = GREATEST(now(), c.updated_at)
    WHERE c.tenant_id = $1 AND c.id = $2 AND (c.stage, 0)
      IS DISTINCT FROM ($3::stage, 0) AND c.version = ANY($4::int[]) RETURNING c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- ERASED_AMONG_SQL
SELECT email_hash AS hash FROM erased_emails
  WHERE tenant_id = $1 AND email_hash = ANY($2::bpchar[]);

-- HAS_ERASED_SQL
SELECT EXISTS (SELECT 1 FROM erased_emails WHERE tenant_id = $1) AS erased;

-- FEED_ANCHOR_SQL
SELECT feed_anchor($1);
