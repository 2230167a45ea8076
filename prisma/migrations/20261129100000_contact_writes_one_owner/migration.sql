-- One owner of a contact's writes (issue "One owner of a contact's writes"; docs/decisions/0010-one-owner-of-contact-writes.md):
-- the triggers do what every write of a contact entails, for every writer alike, and nothing switches them off.
-- Until now the batch import set rubrica.batch_writes, which made the insert's BEFORE trigger and the AFTER
-- triggers skip its rows, and redid their work in statements of its own (its events and tag links, its rows'
-- email keys and instants). The AFTER row triggers (an event and the tag links per row) become statement
-- triggers, which do that work for all the rows of a statement at once, a batch's thousand or a PATCH's one: the
-- batch now writes through them unchanged. The rows are read from the statement's transition tables into arrays
-- first: on Citus an INSERT into a distributed table cannot read a trigger's tuplestore, it takes arrays.

-- On Citus, functions are replaced and triggers created one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- Each row, before it is written. An UPDATE that would leave a row as it was does not write it (the trigger
-- answers NULL): no version, no updatedAt, no event, whoever the writer, as for a PATCH that changes nothing. The
-- row is compared without search_words, a generated column, which a BEFORE trigger sees as NULL in NEW.
CREATE OR REPLACE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  asked TEXT;
  previous TEXT[];
  unknown TEXT[];
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
  IF ROW(NEW.*) IS NOT DISTINCT FROM ROW(was.*) THEN
    RETURN NULL;
  END IF;
  NEW.version := OLD.version + 1;
  NEW.updated_at := GREATEST(NEW.updated_at, OLD.updated_at + interval '1 millisecond');
  RETURN NEW;
END
$$;

-- The events and tag links of the rows an INSERT or an UPDATE statement wrote. Events: one per row created, one
-- per row an UPDATE wrote (contacts_before_write leaves out rows it would not change), in the order the statement wrote them,
-- numbered on from the transaction's last (rubrica.event_n, as feed_event_n), under the transaction's number in
-- the tenant's feed (feed_txn), at one instant of this node's clock. Tag links: a created row's tags linked; an
-- updated row's added tags linked and removed ones unlinked. Each tenant's rows in statements of their own (a
-- statement written by hand may touch several tenants; rubrica's touch one), so that on Citus each runs on one
-- node.
CREATE FUNCTION "contacts_after_write"() RETURNS trigger LANGUAGE plpgsql AS $$
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
        bool_or(cardinality(a.tags) > 0)
      INTO tenants, ids, states, retagged FROM added a;
  ELSE
    SELECT array_agg(a.tenant_id ORDER BY a.k), array_agg(a.id ORDER BY a.k),
        array_agg(to_jsonb(a) - 'search_words' - 'k' ORDER BY a.k), bool_or(a.tags IS DISTINCT FROM b.tags)
      INTO tenants, ids, states, retagged
    FROM (SELECT x.*, row_number() OVER () AS k FROM changed x) a
      JOIN (SELECT y.tags, row_number() OVER () AS k FROM replaced y) b ON b.k = a.k;
  END IF;
  IF tenants IS NULL THEN
    RETURN NULL;
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

-- In a DO block: on Citus each trigger is dropped and created on every shard of contacts from the text of one
-- command. A trigger with transition tables cannot name columns (UPDATE OF): the function finds the rows that
-- changed, and the tags that did.
DO $$
BEGIN
  DROP TRIGGER "contacts_before_insert" ON "contacts";
  CREATE TRIGGER "contacts_before_insert" BEFORE INSERT ON "contacts"
    FOR EACH ROW EXECUTE FUNCTION "contacts_before_write"();
  DROP TRIGGER "contacts_after_insert_tags" ON "contacts";
  DROP TRIGGER "contacts_after_update_tags" ON "contacts";
  DROP TRIGGER "contacts_after_insert_event" ON "contacts";
  DROP TRIGGER "contacts_after_update_event" ON "contacts";
  CREATE TRIGGER "contacts_after_insert" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "contacts_after_write"();
  CREATE TRIGGER "contacts_after_update" AFTER UPDATE ON "contacts"
    REFERENCING OLD TABLE AS replaced NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION "contacts_after_write"();
END
$$;

DROP FUNCTION "contacts_record_event"();
DROP FUNCTION "contacts_link_tags"();
