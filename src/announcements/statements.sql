-- The statements the service sends: written by `npm run sql:write` from src/announcements/channel.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- NOTIFY_SQL
SELECT pg_notify($1, $2);
