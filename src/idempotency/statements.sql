-- The statements the service sends: written by `npm run sql:write` from src/idempotency/repository.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- FIND_SQL
SELECT request_hash AS "requestHash", status, headers, body, contact_ids::text[] AS "contactIds"
  FROM idempotency_keys
  WHERE tenant_id = $1 AND key = $2 AND created_at >= now() - interval '24 hours';

-- LOCK_SQL
SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked;

-- PURGE_SQL
WITH doomed AS (
    DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key IN (
      SELECT key FROM idempotency_keys WHERE tenant_id = $1 AND created_at < now() - interval '24 hours' LIMIT $2)
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM doomed;

-- STORE_SQL
INSERT INTO idempotency_keys (tenant_id, key, request_hash, status, headers, body, contact_ids)
  VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[])
  ON CONFLICT (tenant_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
    headers = EXCLUDED.headers, body = EXCLUDED.body, contact_ids = EXCLUDED.contact_ids, created_at = EXCLUDED.created_at;
