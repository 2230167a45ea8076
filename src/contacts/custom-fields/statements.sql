-- The statements the service sends: written by `npm run sql:write` from src/contacts/custom-fields/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- CHANGE_LOCK_SQL
SELECT pg_advisory_xact_lock(custom_fields_lock(tenant_id)) AS locked
  FROM custom_fields WHERE tenant_id = $1 AND name = $2;

-- COUNT_SQL
SELECT count(*)::int AS n FROM custom_fields WHERE tenant_id = $1 AND removed_at IS NULL;

-- CREATE_SQL
INSERT INTO custom_fields (tenant_id, name, type, label, options, max_length)
  VALUES ($1, $2, $3, $4, $5::text[], $6) ON CONFLICT DO NOTHING
  RETURNING name, type, label, options, max_length AS "maxLength", iso_utc(created_at) AS "createdAt",
    iso_utc(updated_at) AS "updatedAt";

-- DEFINITIONS_SQL
SELECT name, type, label, options, max_length AS "maxLength", to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", removed_at IS NOT NULL AS removing
  FROM custom_fields WHERE tenant_id = $1 ORDER BY name;

-- EVENTS_PAGE_SQL
SELECT max(p.txn)::text AS txn, (array_agg(p.n ORDER BY p.txn DESC, p.n DESC))[1]::text AS n
  FROM (SELECT e.txn, e.n FROM events e WHERE e.tenant_id = $1 AND (e.txn, e.n) > ($2::bigint, $3::bigint)
    ORDER BY e.txn, e.n LIMIT 1000) p HAVING count(*) > 0;

-- FORGET_SQL
DELETE FROM custom_fields f
  WHERE f.tenant_id = $1 AND f.name = $2 AND f.removed_at < now() - interval '1 minute'
    AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.tenant_id = $1 AND c.fields ? $2)
  RETURNING f.name;

-- HOLDING_LONGER_SQL
SELECT count(*)::int AS n FROM contacts
  WHERE tenant_id = $1 AND fields ? $2 AND length(fields ->> $2) > $3;

-- HOLDING_SQL
SELECT count(*)::int AS n FROM contacts WHERE tenant_id = $1 AND fields ? $2;

-- HOLDING_VALUES_SQL
SELECT count(*)::int AS n FROM contacts WHERE tenant_id = $1 AND fields @> ANY($2::jsonb[]);

-- LOCK_SQL
SELECT name FROM custom_fields WHERE tenant_id = $1 ORDER BY name FOR UPDATE;

-- RECLAIM_EVENTS_SQL
UPDATE events e SET contact = e.contact #- ARRAY['fields', $2::text]
  WHERE e.tenant_id = $1 AND (e.txn, e.n) > ($3::bigint, $4::bigint) AND (e.txn, e.n) <= ($5::bigint, $6::bigint)
    AND e.contact -> 'fields' ? $2
  RETURNING e.n;

-- RECLAIM_SQL
UPDATE contacts c SET fields = c.fields - $2::text
  WHERE c.tenant_id = $1 AND c.id IN (SELECT x.id FROM contacts x WHERE x.tenant_id = $1 AND x.fields ? $2
    ORDER BY x.id LIMIT 500 FOR UPDATE SKIP LOCKED)
  RETURNING c.id;

-- REMOVE_SQL
UPDATE custom_fields SET removed_at = now()
  WHERE tenant_id = $1 AND name = $2 AND removed_at IS NULL RETURNING name;

-- UPDATE_SQL
UPDATE custom_fields SET type = $3, label = $4, options = $5::text[], max_length = $6,
    updated_at = now()
  WHERE tenant_id = $1 AND name = $2 AND removed_at IS NULL
  RETURNING name, type, label, options, max_length AS "maxLength", iso_utc(created_at) AS "createdAt",
    iso_utc(updated_at) AS "updatedAt";
