-- A definition changed while a write of a value it no longer takes was on its way (issue "Your tenant's own
-- fields"): the write checked its values against the definition as it was, the change counted the values stored
-- before the write committed, and the value stayed, outside the new definition. The contacts' statement trigger
-- now shares the tenant's fields lock with the change, which takes it alone, and checks again the values of a
-- definition changed within the last minute (docs/api-fields.md, "Values on contacts").

-- On Citus, functions are replaced one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- Whether a value satisfies a definition: the rules of src/contacts/custom-fields/model.ts (valueSchemaOf) that a
-- change of the definition can narrow (its type, options, length; a day or an instant of the calendar), which the
-- service checks first; a test compares the two on the same values. 
CREATE OR REPLACE FUNCTION "custom_field_fits"(type TEXT, options TEXT[], max_length INTEGER, value JSONB)
RETURNS BOOLEAN LANGUAGE plpgsql STABLE AS $$
BEGIN
  CASE type
    WHEN 'text' THEN
      -- PRINTABLE (src/schemas/common.ts): no control, format (Cf, as of Unicode 15) or line separator characters.
      RETURN jsonb_typeof(value) = 'string' AND length(value #>> '{}') <= COALESCE(max_length, 1000)
        AND value #>> '{}' !~ E'[\\x01-\\x1F\\x7F-\\x9F\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890\\u0891\\u08E2\\u180E\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uFEFF\\uFFF9-\\uFFFB\\U000110BD\\U000110CD\\U00013430-\\U0001343F\\U0001BCA0-\\U0001BCA3\\U0001D173-\\U0001D17A\\U000E0001\\U000E0020-\\U000E007F]';
    WHEN 'number' THEN
      -- A double, as JSON gives the service one: 1e309 is not a number there.
      RETURN jsonb_typeof(value) = 'number' AND abs((value #>> '{}')::NUMERIC) <= 1.7976931348623157e308;
    WHEN 'boolean' THEN
      RETURN jsonb_typeof(value) = 'boolean';
    WHEN 'date' THEN
      RETURN jsonb_typeof(value) = 'string' AND value #>> '{}' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
        AND (value #>> '{}')::DATE IS NOT NULL;
    WHEN 'datetime' THEN
      RETURN jsonb_typeof(value) = 'string'
        AND value #>> '{}' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
        -- Written back as it came: no 24:00, no leap second, which PostgreSQL reads as the next day or minute.
        AND to_char((value #>> '{}')::TIMESTAMPTZ AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') = value #>> '{}';
    WHEN 'enum' THEN
      RETURN jsonb_typeof(value) = 'string' AND value #>> '{}' = ANY(options);
    WHEN 'multiEnum' THEN
      RETURN jsonb_typeof(value) = 'array'
        AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(value) x
          WHERE jsonb_typeof(x) <> 'string' OR x #>> '{}' <> ALL(options))
        AND jsonb_array_length(value) = (SELECT count(DISTINCT x) FROM jsonb_array_elements(value) x);
    ELSE
      RETURN false;
  END CASE;
-- A date or an instant that the pattern takes and the calendar does not (2026-02-30, year 0).
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
  RETURN false;
END
$$;

-- The key of a tenant's fields lock (an advisory lock): shared by the writes of values, taken alone by a change of
-- a definition.
CREATE OR REPLACE FUNCTION "custom_fields_lock"(tenant UUID) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended('rubrica.custom_fields:' || tenant::TEXT, 0)
$$;

-- The statement's rows, after it (as in custom_fields, with the definitions held and checked again).
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
