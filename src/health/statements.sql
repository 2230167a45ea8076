-- The statements the service sends: written by `npm run sql:write` from src/health/routes.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- PROBE_SQL
SELECT 1;
