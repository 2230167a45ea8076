-- A tenant's own fields (issue "Your tenant's own fields"; docs/decisions/0011-custom-fields-in-one-json-column.md):
-- their definitions, one row each in custom_fields, and their values on each contact in one JSON object,
-- contacts.fields, keyed by the field's name. The write rules stay in the contacts' triggers: a value must be of a
-- field the tenant defines; a write that only drops values of a deleted field (the reclaim, after a DELETE of the
-- definition) is not a change of the contact. Readers see no value of a deleted field from the moment it is
-- deleted: the select list of a contact drops the names of the tenant's deleted fields (src/contacts/sql.ts).

-- On Citus, functions are replaced and triggers created one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- CreateTable
CREATE TABLE "custom_fields" (
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "label" TEXT,
    "options" TEXT[],
    "max_length" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "removed_at" TIMESTAMPTZ(3),

    CONSTRAINT "custom_fields_pkey" PRIMARY KEY ("tenant_id","name")
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM create_distributed_table('custom_fields', 'tenant_id', colocate_with => 'tags');
  END IF;
END
$$;

-- In DO blocks: Citus sends DDL on a distributed table to its shards as the text of one command.
-- The tenant's deleted fields whose values are still being reclaimed: what every read of a contact drops.
DO $$
BEGIN
  CREATE INDEX "custom_fields_removed_idx" ON "custom_fields" ("tenant_id") WHERE "removed_at" IS NOT NULL;
END
$$;

DO $$
BEGIN
  ALTER TABLE "custom_fields" ADD CONSTRAINT "custom_fields_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
END
$$;

-- The values: an object keyed by field name (a constant default: no table rewrite).
DO $$
BEGIN
  ALTER TABLE "contacts" ADD COLUMN "fields" JSONB NOT NULL DEFAULT '{}';
END
$$;
DO $$
BEGIN
  ALTER TABLE "contacts" ADD CONSTRAINT "contacts_fields_object" CHECK (jsonb_typeof("fields") = 'object');
END
$$;

-- Searches by a field's value (eq, in, hasAll, hasAny) and by its presence (exists), beside the tenant
-- (btree_gin's operator class for the uuid, as contacts_tags_idx): jsonb_ops, which also answers `?`.
DO $$
BEGIN
  CREATE INDEX "contacts_fields_idx" ON "contacts" USING gin ("tenant_id", "fields");
END
$$;

-- Each row, before it is written (as in contact_writes_one_owner, with the fields' rules).
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

-- The events and tag links of the rows a statement wrote (as in contact_writes_one_owner): a row whose version did
-- not move (a reclaim) records none. First, the names of the values the statement gave, each checked once.
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
    SELECT array_agg(a.tenant_id), array_agg(a.id), array_agg(to_jsonb(a) - 'search_words'),
        bool_or(cardinality(a.tags) > 0), bool_or(a.fields <> '{}')
      INTO tenants, ids, states, retagged, valued FROM added a;
  ELSE
    SELECT array_agg(a.tenant_id ORDER BY a.k), array_agg(a.id ORDER BY a.k),
        array_agg(to_jsonb(a) - 'search_words' - 'k' ORDER BY a.k), bool_or(a.tags IS DISTINCT FROM b.tags),
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
  -- each once, looked up per tenant in one statement.
  IF valued THEN
    FOREACH tenant IN ARRAY CASE WHEN tenants[1] = ALL(tenants) THEN tenants[1:1] ELSE ARRAY(SELECT DISTINCT unnest(tenants)) END LOOP
      unknown := ARRAY(SELECT u.k FROM (SELECT DISTINCT jsonb_object_keys(e.state -> 'fields') AS k
          FROM unnest(tenants, states) AS e(tenant_id, state) WHERE e.tenant_id = tenant) u
        WHERE NOT EXISTS (SELECT 1 FROM custom_fields f
          WHERE f.tenant_id = tenant AND f.name = u.k AND f.removed_at IS NULL)
        ORDER BY u.k);
      IF cardinality(unknown) > 0 THEN
        RAISE EXCEPTION 'unknown fields' USING ERRCODE = 'RB002', DETAIL = array_to_json(unknown)::TEXT;
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
