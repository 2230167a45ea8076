-- The statements the service sends: written by `npm run sql:write` from src/contacts/batch/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- KNOWN_TAGS
SELECT name FROM tags WHERE tenant_id = $1 AND name = ANY($2::text[]) FOR KEY SHARE;

-- LOCK
SELECT k.n::int AS n, c.id, CASE WHEN k.item ? 'fields' THEN octet_length(jsonb_strip_nulls(COALESCE((COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)), '{}') || (k.item->'fields'))::text) END AS "mergedBytes"
  FROM (SELECT i.n, lower(i.item->>'email') AS key, i.item FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n) ORDER BY 2 OFFSET 0) k
  LEFT JOIN LATERAL (SELECT c.id, c.fields FROM contacts c WHERE c.tenant_id = $1 AND c.email_key = k.key
    OFFSET 0 FOR NO KEY UPDATE OF c) c ON true;

-- UPDATE
UPDATE contacts c SET first_name = CASE WHEN x.has_first_name THEN x.given_first_name ELSE c.first_name END, last_name = CASE WHEN x.has_last_name THEN x.given_last_name ELSE c.last_name END, phone = CASE WHEN x.has_phone THEN x.given_phone ELSE c.phone END, email_status = CASE WHEN x.has_email_status THEN x.given_email_status ELSE c.email_status END, stage = CASE WHEN x.has_stage THEN x.given_stage ELSE c.stage END, consent_type = CASE WHEN x.has_consent_type THEN x.given_consent_type ELSE c.consent_type END, tags = c.tags || x.given_tags, fields = CASE WHEN x.has_fields THEN jsonb_strip_nulls(c.fields || x.given_fields) ELSE c.fields END,
    updated_at = GREATEST(now(), c.updated_at)
  FROM (
    SELECT i.n::int AS n, lower(i.item->>'email') AS key, i.item ? 'firstName' AS has_first_name, (i.item->>'firstName') AS given_first_name, i.item ? 'lastName' AS has_last_name, (i.item->>'lastName') AS given_last_name, i.item ? 'phone' AS has_phone, (i.item->>'phone') AS given_phone, i.item ? 'emailStatus' AS has_email_status, (i.item->>'emailStatus')::email_status AS given_email_status, i.item ? 'stage' AS has_stage, (i.item->>'stage')::stage AS given_stage, i.item ? 'consentType' AS has_consent_type, (i.item->>'consentType') AS given_consent_type, i.item ? 'tags' AS has_tags, ARRAY(SELECT jsonb_array_elements_text(i.item->'tags')) AS given_tags, i.item ? 'fields' AS has_fields, (i.item->'fields') AS given_fields
    FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n) OFFSET 0) x
  WHERE c.tenant_id = $1 AND c.email_key = x.key AND c.id = ANY($3::uuid[])
    AND ((c.first_name, c.last_name, c.phone, c.email_status, c.stage, c.consent_type, c.fields, 0)
      IS DISTINCT FROM (CASE WHEN x.has_first_name THEN x.given_first_name ELSE c.first_name END, CASE WHEN x.has_last_name THEN x.given_last_name ELSE c.last_name END, CASE WHEN x.has_phone THEN x.given_phone ELSE c.phone END, CASE WHEN x.has_email_status THEN x.given_email_status ELSE c.email_status END, CASE WHEN x.has_stage THEN x.given_stage ELSE c.stage END, CASE WHEN x.has_consent_type THEN x.given_consent_type ELSE c.consent_type END, CASE WHEN x.has_fields THEN jsonb_strip_nulls(c.fields || x.given_fields) ELSE c.fields END, 0)
      OR NOT (x.given_tags <@ c.tags))
  RETURNING x.n, c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;

-- READ
SELECT i.n::int AS n, c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", c.version
  FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n) JOIN contacts c ON c.tenant_id = $1 AND c.email_key = lower(i.item->>'email') AND c.id = ANY($3::uuid[]);

-- ANCHOR
SELECT feed_anchor($1);

-- CLOCK
SELECT (extract(epoch FROM GREATEST(clock_timestamp(), (SELECT max(c.created_at) FROM contacts c
      WHERE c.tenant_id = $1 AND c.created_at > statement_timestamp() - interval '1 second') + interval '1 microsecond'))
      * 1000000)::bigint::text AS at;

-- INSERT
INSERT INTO contacts AS c (id, tenant_id, created_at, email, first_name, last_name, phone, email_status, stage, consent_type, tags, fields, source)
  SELECT (i.item->>'id')::uuid, a.tenant_id, ($3::timestamptz + make_interval(secs => (i.n - 1) / 1e6)),
    (i.item->>'email'), (i.item->>'firstName'), (i.item->>'lastName'), (i.item->>'phone'), COALESCE((i.item->>'emailStatus')::email_status, 'active'::email_status), COALESCE((i.item->>'stage')::stage, 'lead'::stage), COALESCE((i.item->>'consentType'), 'unknown'), COALESCE(ARRAY(SELECT jsonb_array_elements_text(i.item->'tags')), '{}'::text[]), COALESCE(jsonb_strip_nulls((i.item->'fields')), '{}'::jsonb), 'api'
  FROM event_feeds a CROSS JOIN jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i(item, n)
  WHERE a.tenant_id = $1
    AND NOT EXISTS (SELECT 1 FROM contacts e WHERE e.tenant_id = $1 AND e.email_key = lower(i.item->>'email') OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM erased_emails x WHERE x.tenant_id = $1
      AND (i.item->>'emailHash' IS NULL OR x.email_hash = (i.item->>'emailHash')::bpchar) OFFSET 0)
  ORDER BY lower(i.item->>'email')
  ON CONFLICT DO NOTHING
  RETURNING c.email_key AS key, c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", iso_utc(c.archived_at) AS "archivedAt", iso_utc(c.acquired_at) AS "acquiredAt", iso_utc(c.created_at) AS "createdAt", iso_utc(c.updated_at) AS "updatedAt", c.fields AS "fields", c.version;
