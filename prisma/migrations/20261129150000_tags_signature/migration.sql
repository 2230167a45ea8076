-- A search of tags and a stage led by the stage's index (issue "Ask rubrica, not a mirror"; docs/decisions/0008-search-indexes.md,
-- "Tags and a stage in the contacts' order"): each contact's tags as a 64-bit signature, a stored column computed
-- by PostgreSQL from the row, kept in the B-tree of (tenant, stage, createdAt) beside archivedAt, so that a page of
-- "these tags, this stage" walks the stage's contacts newest first in the index alone, and reads from the table only
-- those whose signature holds every tag asked (src/contacts/search/sql.ts, tagsPageStatement).

-- On Citus, functions are replaced one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- Two bits for each tag (of 64, from the name's hash): a contact that has every tag asked has every bit of theirs;
-- one that has the bits may lack a tag (other tags on both of its bits), which the page checks on the row. With one
-- bit a tag, two of a tenant's five tags in ten shared their bit, and a page read twice the rows it kept.
-- PL/pgSQL, whose plan a session keeps: as SQL (an aggregate over unnest, which PostgreSQL cannot inline) it was
-- planned at every statement that computed it, 50-90 µs, a single write's included.
CREATE OR REPLACE FUNCTION "tags_signature"(tags TEXT[]) RETURNS BIGINT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  signature BIGINT := 0;
  h INTEGER;
  t TEXT;
BEGIN
  FOREACH t IN ARRAY COALESCE(tags, '{}') LOOP
    h := hashtext(t);
    signature := signature | (1::BIGINT << (h & 63)) | (1::BIGINT << ((h >> 6) & 63));
  END LOOP;
  RETURN signature;
END
$$;

-- Computed for every contact as the table is rewritten (no trigger runs, no version moves, no event).
DO $$
BEGIN
  ALTER TABLE "contacts" ADD COLUMN "tags_signature" BIGINT GENERATED ALWAYS AS (tags_signature(tags)) STORED;
END
$$;

-- The stage's index again, with the signature and archivedAt beside each entry, which an index-only scan reads
-- (INCLUDE, which prisma/schema.prisma cannot declare: scripts/schema-engine.ts, NOT_IN_PRISMA).
DO $$
BEGIN
  DROP INDEX "contacts_tenant_id_stage_created_at_idx";
  CREATE INDEX "contacts_stage_signature_idx" ON "contacts" ("tenant_id", "stage", "created_at" DESC)
    INCLUDE ("tags_signature", "archived_at");
END
$$;

-- Each row, before it is written (as in custom_fields): the signature, a generated column, is NULL in NEW there,
-- as search_words is; the comparison that tells an UPDATE that changes nothing leaves both out.
CREATE OR REPLACE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  asked TEXT;
  previous TEXT[];
  unknown TEXT[];
  removed TEXT[];
  was contacts;
BEGIN
  IF TG_OP = 'INSERT' OR NEW.tags IS DISTINCT FROM OLD.tags THEN
    NEW.tags := ARRAY(SELECT DISTINCT u COLLATE "C" FROM unnest(NEW.tags) u ORDER BY 1);
    IF cardinality(NEW.tags) > 0 THEN
      unknown := ARRAY(SELECT u FROM unnest(NEW.tags) u
        WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE t.tenant_id = NEW.tenant_id AND t.name = u));
      IF cardinality(unknown) > 0 THEN
        RAISE EXCEPTION 'unknown tags' USING ERRCODE = 'RB001', DETAIL = array_to_json(unknown)::TEXT;
      END IF;
    END IF;
  END IF;
  -- An UPDATE drops the values of the tenant's deleted fields that the contact still holds (readers no longer see
  -- them). That each value is of a field the tenant defines is checked for the whole statement, after it
  -- (contacts_after_write).
  IF TG_OP = 'UPDATE' AND OLD.fields <> '{}' THEN
    removed := ARRAY(SELECT f.name FROM custom_fields f WHERE f.tenant_id = NEW.tenant_id AND f.removed_at IS NOT NULL);
    IF cardinality(removed) > 0 THEN
      NEW.fields := NEW.fields - removed;
    END IF;
  END IF;
  IF (TG_OP = 'INSERT' AND NEW.fields <> '{}') OR (TG_OP = 'UPDATE' AND NEW.fields IS DISTINCT FROM OLD.fields) THEN
    -- The values of one contact are bounded (CUSTOM_FIELD_LIMITS.valuesBytes): what its answers, events and
    -- stored replays carry stays small.
    IF octet_length(NEW.fields::TEXT) > 8192 THEN
      RAISE EXCEPTION 'fields too large' USING ERRCODE = 'RB003', DETAIL = octet_length(NEW.fields::TEXT)::TEXT;
    END IF;
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.created_at = '-infinity' THEN
      NEW.created_at := clock_timestamp();
    END IF;
    asked := NEW.created_at::TEXT;
    previous := string_to_array(current_setting('rubrica.created_at', true), '|');
    IF previous[1] = asked THEN
      NEW.created_at := previous[2]::TIMESTAMPTZ + interval '1 microsecond';
    END IF;
    PERFORM set_config('rubrica.created_at', asked || '|' || NEW.created_at::TEXT, false);
    NEW.email_key := lower(NEW.email);
    IF NEW.acquired_at IS NULL OR NEW.acquired_at = '-infinity' THEN
      NEW.acquired_at := NEW.created_at;
    END IF;
    NEW.updated_at := GREATEST(NEW.updated_at, NEW.created_at);
    RETURN NEW;
  END IF;
  NEW.email_key := lower(NEW.email);
  was := OLD;
  was.search_words := NULL;
  was.tags_signature := NULL;
  IF cardinality(removed) > 0 THEN
    was.fields := OLD.fields - removed;
  END IF;
  IF ROW(NEW.*) IS NOT DISTINCT FROM ROW(was.*) THEN
    -- Nothing changes; or only values of deleted fields go, which reclaims their storage and is no change of the
    -- contact: same version and updatedAt, and contacts_after_write records no event for a row whose version
    -- did not move.
    RETURN CASE WHEN was.fields IS DISTINCT FROM OLD.fields THEN NEW END;
  END IF;
  NEW.version := OLD.version + 1;
  NEW.updated_at := GREATEST(NEW.updated_at, OLD.updated_at + interval '1 millisecond');
  RETURN NEW;
END
$$;

-- The statement's rows, after it (as in custom_field_changes): the events' copies of the row leave the signature
-- out, as they leave search_words.
CREATE OR REPLACE FUNCTION "contacts_after_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  kind event_type := (CASE TG_OP WHEN 'INSERT' THEN 'contact.created' ELSE 'contact.updated' END)::event_type;
  tenants UUID[];
  ids UUID[];
  states JSONB[];
  retagged BOOLEAN;
  link_tenants UUID[];
  link_ids UUID[];
  link_names TEXT[];
  link_added BOOLEAN[];
  valued BOOLEAN;
  named TEXT[];
  known TEXT[];
  changed TEXT[];
  unknown TEXT[];
  tenant UUID;
  txn BIGINT;
  first BIGINT;
  written BIGINT;
  at TIMESTAMPTZ := clock_timestamp();
BEGIN
  -- The rows written, in the order the statement wrote them. An UPDATE's old and new rows are paired by their
  -- place in the two transition tables, which PostgreSQL fills together: a row whose id changed is still found.
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(a.tenant_id), array_agg(a.id), array_agg(to_jsonb(a) - 'search_words' - 'tags_signature'),
        bool_or(cardinality(a.tags) > 0), bool_or(a.fields <> '{}')
      INTO tenants, ids, states, retagged, valued FROM added a;
  ELSE
    SELECT array_agg(a.tenant_id ORDER BY a.k), array_agg(a.id ORDER BY a.k),
        array_agg(to_jsonb(a) - 'search_words' - 'tags_signature' - 'k' ORDER BY a.k), bool_or(a.tags IS DISTINCT FROM b.tags),
        bool_or(a.fields IS DISTINCT FROM b.fields)
      INTO tenants, ids, states, retagged, valued
    FROM (SELECT x.*, row_number() OVER () AS k FROM changed x) a
      JOIN (SELECT y.tags, y.version, y.fields, row_number() OVER () AS k FROM replaced y) b ON b.k = a.k
    WHERE a.version <> b.version;
  END IF;
  IF tenants IS NULL THEN
    RETURN NULL;
  END IF;
  -- Each value the statement wrote is of a field its contact's tenant defines (custom_fields) and has not
  -- deleted (an UPDATE dropped a deleted field's value in contacts_before_write): the names of the rows written,
  -- each once, looked up per tenant in one statement. First the tenant's fields lock, shared with its other writes
  -- until the transaction ends: a change of a definition takes it alone before it counts the values the change
  -- would break (src/contacts/custom-fields/sql.ts, CHANGE_LOCK_SQL), so that it counts this write's values, or this
  -- write reads the definition as changed. A lock in memory (no row locked: concurrent writers would share row locks
  -- through multixacts, 15 µs a name), on the node that holds the tenant's contacts and definitions (colocated).
  -- The service checked the values against the definitions it knew, which may be older than a change of the last
  -- minute (an instance hears of a change within a second, and reads the definitions again at least every 30 s):
  -- the values of a definition changed since are checked here again, by custom_field_fits.
  IF valued THEN
    FOREACH tenant IN ARRAY CASE WHEN tenants[1] = ALL(tenants) THEN tenants[1:1] ELSE ARRAY(SELECT DISTINCT unnest(tenants)) END LOOP
      named := ARRAY(SELECT DISTINCT jsonb_object_keys(e.state -> 'fields')
        FROM unnest(tenants, states) AS e(tenant_id, state) WHERE e.tenant_id = tenant);
      PERFORM pg_advisory_xact_lock_shared(custom_fields_lock(tenant));
      -- A transaction whose snapshot is older than the lock (REPEATABLE READ, SERIALIZABLE: SQL by hand) locks the
      -- definitions too: one changed since its snapshot makes it fail, to be run again (SQLSTATE 40001).
      IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM custom_fields f WHERE f.tenant_id = tenant AND f.name = ANY(named) FOR KEY SHARE;
      END IF;
      SELECT COALESCE(array_agg(f.name), '{}'),
          COALESCE(array_agg(f.name) FILTER (WHERE f.updated_at > f.created_at
            AND f.updated_at > now() - interval '1 minute'), '{}')
        INTO known, changed
      FROM custom_fields f WHERE f.tenant_id = tenant AND f.name = ANY(named) AND f.removed_at IS NULL;
      unknown := ARRAY(SELECT u FROM unnest(named) u WHERE u <> ALL(known) ORDER BY u);
      IF cardinality(unknown) > 0 THEN
        RAISE EXCEPTION 'unknown fields' USING ERRCODE = 'RB002', DETAIL = array_to_json(unknown)::TEXT;
      END IF;
      IF cardinality(changed) > 0 THEN
        unknown := ARRAY(SELECT DISTINCT v.key FROM unnest(tenants, states) AS e(tenant_id, state)
            CROSS JOIN LATERAL jsonb_each(e.state -> 'fields') v
            JOIN custom_fields f ON f.tenant_id = tenant AND f.name = v.key
          WHERE e.tenant_id = tenant AND v.key = ANY(changed)
            AND NOT custom_field_fits(f.type, f.options, f.max_length, v.value)
          ORDER BY 1);
        IF cardinality(unknown) > 0 THEN
          RAISE EXCEPTION 'values outside their definitions' USING ERRCODE = 'RB004',
            DETAIL = array_to_json(unknown)::TEXT;
        END IF;
      END IF;
    END LOOP;
  END IF;
  -- Each tenant's rows (one tenant, as in each of rubrica's statements, is found without a query).
  FOREACH tenant IN ARRAY CASE WHEN tenants[1] = ALL(tenants) THEN tenants[1:1] ELSE ARRAY(SELECT DISTINCT unnest(tenants)) END LOOP
    txn := feed_txn(tenant);
    first := COALESCE(NULLIF(current_setting('rubrica.event_n', true), ''), '0')::BIGINT;
    IF cardinality(ids) = 1 THEN
      -- A single write's row: the plain INSERT costs less than reading the arrays.
      INSERT INTO "events" (tenant_id, txn, n, id, type, occurred_at, contact_id, contact)
      VALUES (tenant, txn, first + 1, gen_random_uuid(), kind, at, ids[1], states[1]);
      written := 1;
    ELSE
      INSERT INTO "events" (tenant_id, txn, n, id, type, occurred_at, contact_id, contact)
      SELECT tenant, txn, first + row_number() OVER (ORDER BY e.k), gen_random_uuid(), kind, at, e.id, e.state
      FROM unnest(tenants, ids, states) WITH ORDINALITY AS e(tenant_id, id, state, k) WHERE e.tenant_id = tenant;
      GET DIAGNOSTICS written = ROW_COUNT;
    END IF;
    PERFORM set_config('rubrica.event_n', (first + written)::TEXT, true);
  END LOOP;
  IF NOT retagged THEN
    RETURN NULL;
  END IF;
  -- The tag links: each name a row gained (added) or lost (not added).
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(a.tenant_id), array_agg(a.id), array_agg(u), array_agg(true)
      INTO link_tenants, link_ids, link_names, link_added FROM added a CROSS JOIN LATERAL unnest(a.tags) u;
  ELSE
    SELECT array_agg(a.tenant_id), array_agg(a.id), array_agg(d.name), array_agg(d.added)
      INTO link_tenants, link_ids, link_names, link_added
    FROM (SELECT x.tenant_id, x.id, x.tags, row_number() OVER () AS k FROM changed x) a
      JOIN (SELECT y.tags, row_number() OVER () AS k FROM replaced y) b ON b.k = a.k AND b.tags IS DISTINCT FROM a.tags
      CROSS JOIN LATERAL (SELECT u, true FROM unnest(a.tags) u WHERE u <> ALL(b.tags)
        UNION ALL SELECT u, false FROM unnest(b.tags) u WHERE u <> ALL(a.tags)) d(name, added);
  END IF;
  FOREACH tenant IN ARRAY CASE WHEN link_tenants[1] = ALL(link_tenants) THEN link_tenants[1:1]
    ELSE ARRAY(SELECT DISTINCT unnest(link_tenants)) END LOOP
    INSERT INTO contact_tags (tenant_id, contact_id, tag_id)
    SELECT t.tenant_id, l.id, t.id
    FROM unnest(link_tenants, link_ids, link_names, link_added) AS l(tenant_id, id, name, added)
      JOIN tags t ON t.tenant_id = tenant AND t.name = l.name
    WHERE l.tenant_id = tenant AND l.added
    ON CONFLICT DO NOTHING;
    DELETE FROM contact_tags ct USING tags t
    WHERE ct.tenant_id = tenant AND t.tenant_id = tenant AND t.id = ct.tag_id
      AND (ct.contact_id, t.name) IN (
        SELECT l.id, l.name FROM unnest(link_tenants, link_ids, link_names, link_added) AS l(tenant_id, id, name, added)
        WHERE l.tenant_id = tenant AND NOT l.added);
  END LOOP;
  RETURN NULL;
END
$$;
