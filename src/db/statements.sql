-- The statements the service sends: written by `npm run sql:write` from src/db/housekeeping.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- TENANTS_SQL
SELECT id FROM tenants WHERE id > $1 ORDER BY id LIMIT $2;
