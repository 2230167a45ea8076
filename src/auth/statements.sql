-- The statements the service sends: written by `npm run sql:write` from src/auth/key-repository.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- RESOLVE_SQL
SELECT k.id, k.tenant_id AS "tenantId", t.status AS "tenantStatus", k.role, k.scopes,
  t.rate_limit_max AS "rateLimitMax", k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt"
  FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = $1;

-- TOUCH_SQL
UPDATE api_keys SET last_used_at = now() WHERE tenant_id = $1 AND id = $2;
