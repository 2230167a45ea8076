-- The statements the service sends: written by `npm run sql:write` from src/events/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- EMPTY_COMMITS_SQL
DELETE FROM event_commits k WHERE k.tenant_id = $1 AND k.seq <= $2::bigint
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = $1 AND e.txn = k.txn);

-- END_SQL
SELECT e.seq::text AS seq, e.n::text AS n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn ORDER BY e.n DESC LIMIT 1) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL) e
  ORDER BY e.seq DESC, e.n DESC LIMIT 1;

-- FIRST_KEPT_SQL
SELECT e.seq::text AS seq, e.n::text AS n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn ORDER BY e.n OFFSET 0) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL) e
  WHERE e.occurred_at >= now() - make_interval(days => $2) ORDER BY e.seq, e.n LIMIT 1;

-- PURGED_SQL
INSERT INTO event_feeds (tenant_id, purged_seq, purged_n) VALUES ($1, $2, $3)
  ON CONFLICT (tenant_id) DO UPDATE SET purged_seq = EXCLUDED.purged_seq, purged_n = EXCLUDED.purged_n
  WHERE (event_feeds.purged_seq, event_feeds.purged_n) < (EXCLUDED.purged_seq, EXCLUDED.purged_n);

-- PURGE_SQL
WITH doomed AS (
    DELETE FROM events d USING event_commits k
    WHERE d.tenant_id = $1 AND k.tenant_id = $1 AND k.txn = d.txn AND (d.txn, d.n) IN (
      SELECT e.txn, e.n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn ORDER BY e.n OFFSET 0) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL) e
      WHERE ($2::bigint IS NULL OR (e.seq, e.n) < ($2::bigint, $3::bigint))
        AND e.occurred_at < now() - make_interval(days => $5::int)
      ORDER BY e.seq, e.n LIMIT $4)
    RETURNING k.seq, d.n)
  SELECT count(*)::int AS deleted, max(seq)::text AS seq,
    (SELECT max(n) FROM doomed WHERE seq = (SELECT max(seq) FROM doomed))::text AS n
  FROM doomed;

-- SEQUENCE_SQL
WITH feed AS (
    SELECT f.last_seq FROM event_feeds f
    WHERE f.tenant_id = $1 AND EXISTS (SELECT 1 FROM event_commits k WHERE k.tenant_id = $1 AND k.seq IS NULL)
    FOR NO KEY UPDATE),
  pending AS (
    SELECT k.txn, row_number() OVER (ORDER BY (SELECT e.occurred_at FROM events e
        WHERE e.tenant_id = $1 AND e.txn = k.txn ORDER BY e.n DESC LIMIT 1), k.xmin::text::bigint, k.txn) AS i
    FROM event_commits k WHERE k.tenant_id = $1 AND k.seq IS NULL AND EXISTS (SELECT 1 FROM feed)),
  numbered AS (
    UPDATE event_commits k SET seq = (SELECT last_seq FROM feed) + p.i FROM pending p
    WHERE k.tenant_id = $1 AND k.txn = p.txn AND k.seq IS NULL
    RETURNING k.seq)
  UPDATE event_feeds f SET last_seq = GREATEST(f.last_seq, (SELECT max(seq) FROM numbered))
  WHERE f.tenant_id = $1 AND EXISTS (SELECT 1 FROM numbered)
  RETURNING (SELECT count(*)::int FROM numbered) AS numbered;

-- pageStatement(101 events)
SELECT h.seq::text AS "endSeq", h.n::text AS "endN",
      f.purged_seq::text AS "purgedSeq", f.purged_n::text AS "purgedN", NULL AS "windowSeq", NULL AS "windowN", p.seq, p.n, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT 1) s
    LEFT JOIN LATERAL (SELECT e.seq::text AS seq, e.n::text AS n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn ORDER BY e.n DESC LIMIT 1) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL) e
  ORDER BY e.seq DESC, e.n DESC LIMIT 1) h ON true
    LEFT JOIN event_feeds f ON f.tenant_id = $1
    LEFT JOIN LATERAL (SELECT e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) END AS data
      FROM (SELECT * FROM (SELECT e.* FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn AND e.n > CASE WHEN t.seq = $2::bigint THEN $3::bigint ELSE 0 END ORDER BY e.n LIMIT 101) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL AND t.seq >= $2::bigint) e ORDER BY e.seq, e.n LIMIT 101) e ) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c) p ON true
    ORDER BY p.seq::bigint NULLS FIRST, p.n::bigint;

-- pageStatement(101 events, of some types)
WITH kept AS (SELECT w.* FROM (SELECT e.* FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn AND e.n > CASE WHEN t.seq = $2::bigint THEN $3::bigint ELSE 0 END ORDER BY e.n LIMIT 1000) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL AND t.seq >= $2::bigint) e ORDER BY e.seq, e.n LIMIT 1000) w
      WHERE w.type = ANY($4::text[]::event_type[]) ORDER BY w.seq, w.n LIMIT 101),
    read AS (SELECT w.seq, w.n FROM (SELECT e.seq, e.n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn AND e.n > CASE WHEN t.seq = $2::bigint THEN $3::bigint ELSE 0 END ORDER BY e.n LIMIT 1000) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL AND t.seq >= $2::bigint) e ORDER BY e.seq, e.n LIMIT 1000) w
      WHERE (SELECT count(*) FROM kept) < 101 ORDER BY w.seq DESC, w.n DESC LIMIT 1)
    SELECT h.seq::text AS "endSeq", h.n::text AS "endN",
      f.purged_seq::text AS "purgedSeq", f.purged_n::text AS "purgedN", r.seq::text AS "windowSeq", r.n::text AS "windowN",
      p.seq, p.n, p.id, p.type, p."occurredAt", p.data
    FROM (SELECT 1) s
    LEFT JOIN LATERAL (SELECT e.seq::text AS seq, e.n::text AS n FROM (SELECT t.seq, e.* FROM event_commits t
      CROSS JOIN LATERAL (SELECT * FROM events e WHERE e.tenant_id = $1 AND e.txn = t.txn ORDER BY e.n DESC LIMIT 1) e
      WHERE t.tenant_id = $1 AND t.seq IS NOT NULL) e
  ORDER BY e.seq DESC, e.n DESC LIMIT 1) h ON true
    LEFT JOIN event_feeds f ON f.tenant_id = $1
    LEFT JOIN read r ON true
    LEFT JOIN LATERAL (SELECT e.seq::text AS seq, e.n::text AS n, e.id, e.type,
        to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredAt",
        CASE WHEN e.contact IS NULL THEN json_build_object('id', e.contact_id, 'erased', true)
          ELSE (SELECT row_to_json(x) FROM (SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields") x) END AS data
      FROM (SELECT * FROM kept e ) e CROSS JOIN LATERAL jsonb_populate_record(NULL::contacts, e.contact) c) p ON true
    ORDER BY p.seq::bigint NULLS FIRST, p.n::bigint;
