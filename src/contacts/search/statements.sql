-- The statements the service sends: written by `npm run sql:write` from src/contacts/search/sql.ts.
-- Do not edit: change the code, then write it again (test/db/sql-files.test.ts fails while the two differ).

-- pageStatement(every contact, first page)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND c.archived_at IS NULL ORDER BY c.created_at DESC LIMIT 51) c
    ORDER BY c.created_at DESC;

-- pageStatement(every contact, after a position)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND c.archived_at IS NULL AND c.created_at < $2::timestamptz ORDER BY c.created_at DESC LIMIT 51) c
    ORDER BY c.created_at DESC;

-- pageStatement(tags hasAll, stage eq; OR updatedAt gte; by -updatedAt, the walk begins)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated", to_char(((LEAST(statement_timestamp(), (SELECT min(a.xact_start) FROM pg_stat_get_activity(NULL) a
      WHERE a.datid = (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))) - interval '1 minute') AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', ((LEAST(statement_timestamp(), (SELECT min(a.xact_start) FROM pg_stat_get_activity(NULL) a
      WHERE a.datid = (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))) - interval '1 minute') AT TIME ZONE 'UTC')) = ((LEAST(statement_timestamp(), (SELECT min(a.xact_start) FROM pg_stat_get_activity(NULL) a
      WHERE a.datid = (SELECT m.datid FROM pg_stat_get_activity(pg_backend_pid()) m))) - interval '1 minute') AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "walkBound",
    pg_current_snapshot()::text AS "walkSnapshot",
    left(md5((SELECT system_identifier FROM pg_control_system())::text), 16) AS "walkNode"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND ((c.tags @> $2::text[] AND c.stage = $3::stage AND c.archived_at IS NULL) OR (c.updated_at >= date_trunc('milliseconds', $4::timestamptz) AND c.archived_at IS NULL)) ORDER BY c.updated_at DESC, c.created_at DESC LIMIT 51) c
    ORDER BY c.updated_at DESC, c.created_at DESC;

-- pageStatement(fields.livello eq, fields.punti between, fields.interessi hasAny)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND c.fields @> E'{"livello":"oro"}'::jsonb AND CASE WHEN jsonb_typeof(c.fields -> $2::text) = 'number' THEN (c.fields ->> $2::text)::numeric >= $3::numeric AND (c.fields ->> $2::text)::numeric <= $4::numeric END AND (c.fields @> E'{"interessi":["vino"]}'::jsonb) AND c.archived_at IS NULL ORDER BY c.created_at DESC LIMIT 51) c
    ORDER BY c.created_at DESC;

-- pageStatement(query "rossi")
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND c.archived_at IS NULL AND c.search_words @@ contact_words_match(ARRAY[$2::text], true) ORDER BY c.created_at DESC LIMIT 51) c
    ORDER BY c.created_at DESC;

-- wordsPageStatement(query "rossi")
WITH lead AS MATERIALIZED (SELECT w AS word FROM search_text($3::text) w WHERE length(w) >= 3 AND strpos(w, ' ') = 0)
    SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT DISTINCT w.created_at
        FROM (SELECT w.created_at, w.word FROM contact_words w
          WHERE w.tenant_id = $1 AND w.prefix = word_prefix((SELECT word FROM lead))
          ORDER BY w.created_at DESC LIMIT 2000) w
        WHERE starts_with(w.word, (SELECT word FROM lead))
        ORDER BY w.created_at DESC) w
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = w.created_at AND c.tenant_id = $1 AND c.archived_at IS NULL AND c.search_words @@ (SELECT contact_words_match(ARRAY[$2::text], true)) LIMIT 1) c
    ORDER BY w.created_at DESC LIMIT 51;

-- wordsPageStatement(query "rossi", after a position)
WITH lead AS MATERIALIZED (SELECT w AS word FROM search_text($3::text) w WHERE length(w) >= 3 AND strpos(w, ' ') = 0)
    SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT DISTINCT w.created_at
        FROM (SELECT w.created_at, w.word FROM contact_words w
          WHERE w.tenant_id = $1 AND w.prefix = word_prefix((SELECT word FROM lead)) AND w.created_at < $4::timestamptz
          ORDER BY w.created_at DESC LIMIT 2000) w
        WHERE starts_with(w.word, (SELECT word FROM lead))
        ORDER BY w.created_at DESC) w
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = w.created_at AND c.tenant_id = $1 AND c.archived_at IS NULL AND c.search_words @@ (SELECT contact_words_match(ARRAY[$2::text], true)) LIMIT 1) c
    ORDER BY w.created_at DESC LIMIT 51;

-- wordsReadAgainStatement(query "rossi")
WITH lead AS MATERIALIZED (SELECT w AS word FROM search_text($2::text) w WHERE length(w) >= 3 AND strpos(w, ' ') = 0)
    SELECT (SELECT word FROM lead) IS NULL
      OR (SELECT count(*) FROM (SELECT 1 FROM contact_words w WHERE w.tenant_id = $1 AND w.prefix = word_prefix((SELECT word FROM lead)) LIMIT 2000) w) = 2000
      AS "readAgain";

-- tagsPageStatement(tags hasAll, stage eq)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT s.created_at FROM contacts s
        WHERE s.tenant_id = $1 AND s.stage = $4::stage AND s.tags_signature & (SELECT tags_signature($5::text[])) = (SELECT tags_signature($5::text[])) AND s.archived_at IS NULL
        ORDER BY s.created_at DESC LIMIT 2000) s
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = s.created_at AND c.tenant_id = $1 AND c.tags @> $2::text[] AND c.stage = $3::stage AND c.archived_at IS NULL LIMIT 1) c
    ORDER BY s.created_at DESC LIMIT 51;

-- tagsPageStatement(tags hasAll, stage eq, after a position)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT s.created_at FROM contacts s
        WHERE s.tenant_id = $1 AND s.stage = $4::stage AND s.tags_signature & (SELECT tags_signature($5::text[])) = (SELECT tags_signature($5::text[])) AND s.archived_at IS NULL AND s.created_at < $6::timestamptz
        ORDER BY s.created_at DESC LIMIT 2000) s
      CROSS JOIN LATERAL (SELECT * FROM contacts c WHERE c.created_at = s.created_at AND c.tenant_id = $1 AND c.tags @> $2::text[] AND c.stage = $3::stage AND c.archived_at IS NULL LIMIT 1) c
    ORDER BY s.created_at DESC LIMIT 51;

-- wordsReadAgainStatement(query "rossi", after a position)
WITH lead AS MATERIALIZED (SELECT w AS word FROM search_text($2::text) w WHERE length(w) >= 3 AND strpos(w, ' ') = 0)
    SELECT (SELECT word FROM lead) IS NULL
      OR (SELECT count(*) FROM (SELECT 1 FROM contact_words w WHERE w.tenant_id = $1 AND w.prefix = word_prefix((SELECT word FROM lead)) AND w.created_at < $3::timestamptz LIMIT 2000) w) = 2000
      AS "readAgain";

-- changedStatement(tags hasAll)
SELECT c.id AS "id", c.email AS "email", c.first_name AS "firstName", c.last_name AS "lastName", c.phone AS "phone", c.email_status AS "emailStatus", c.stage AS "stage", c.source AS "source", c.consent_type AS "consentType", c.tags AS "tags", to_char(c.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "archivedAt", to_char(c.acquired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "acquiredAt", to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", (COALESCE(c.fields, '{}') - ARRAY(SELECT f.name FROM custom_fields f
      WHERE f.tenant_id = $1 AND f.removed_at IS NOT NULL)) AS "fields", to_char((c.created_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.created_at AT TIME ZONE 'UTC')) = (c.created_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionCreated",
    to_char((c.updated_at AT TIME ZONE 'UTC'), CASE WHEN date_trunc('milliseconds', (c.updated_at AT TIME ZONE 'UTC')) = (c.updated_at AT TIME ZONE 'UTC')
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END) AS "positionUpdated"
    FROM (SELECT * FROM contacts c WHERE c.tenant_id = $1 AND c.tags @> $2::text[] AND c.archived_at IS NULL AND c.updated_at >= $3::timestamptz
      AND CASE WHEN left(md5((SELECT system_identifier FROM pg_control_system())::text), 16) = $5::text THEN NOT pg_visible_in_snapshot((pg_snapshot_xmax(pg_current_snapshot())::text::bigint
      - ((pg_snapshot_xmax(pg_current_snapshot())::text::bigint - c.xmin::text::bigint) % 4294967296 + 4294967296) % 4294967296)::text::xid8, $4::pg_snapshot) ELSE true END
      ORDER BY c.updated_at, c.created_at LIMIT 51) c
    ORDER BY c.updated_at, c.created_at;

-- countStatement(tags hasAll)
SELECT count(*)::int AS total FROM contacts c WHERE c.tenant_id = $1 AND c.tags @> $2::text[] AND c.archived_at IS NULL;
