-- The database's functions and triggers as they are now: written by `npm run sql:write` from prisma/migrations, applied to an empty database.
-- Do not edit: change them in a new migration, then write it again (test/db/sql-files.test.ts fails while the two differ).

CREATE OR REPLACE FUNCTION public.contact_phone_match(phones text[], prefix boolean)
 RETURNS tsquery
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT string_agg('''+' || phone_digits(p) || '''' || CASE WHEN prefix THEN ':*' ELSE '' END, ' | ')::TSQUERY
  FROM unnest(phones) p WHERE phone_digits(p) <> ''
$function$;

CREATE OR REPLACE FUNCTION public.contact_search_words(first_name text, last_name text, email text, phone text)
 RETURNS tsvector
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'public'
AS $function$
DECLARE
  words TEXT[] := search_split(concat_ws(' ', first_name, last_name, email));
  word TEXT;
  digits TEXT := phone_digits(phone);
BEGIN
  IF strpos(array_to_string(words, ' '), '''') > 0 THEN
    FOREACH word IN ARRAY words LOOP
      IF strpos(word, '''') > 0 THEN
        words := words || replace(word, '''', '') || substr(word, strpos(word, '''') + 1);
      END IF;
    END LOOP;
  END IF;
  IF digits <> '' THEN
    words := words || ('+' || digits);
  END IF;
  RETURN array_to_tsvector(words);
END
$function$;

CREATE OR REPLACE FUNCTION public.contact_words_match(texts text[], prefix boolean)
 RETURNS tsquery
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT string_agg(t.words, ' | ')::TSQUERY FROM (
    SELECT '(' || string_agg('''' || replace(w, '''', '''''') || '''' || CASE WHEN prefix THEN ':*' ELSE '' END,
      ' & ') || ')' AS words
    FROM unnest(texts) WITH ORDINALITY AS v(text, i) CROSS JOIN LATERAL unnest(search_split(v.text)) AS w
    GROUP BY v.i) t
$function$;

CREATE OR REPLACE FUNCTION public.contact_words_of(words tsvector)
 RETURNS SETOF text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT w FROM unnest(tsvector_to_array(words)) w WHERE left(w, 1) <> '+'
$function$;

CREATE OR REPLACE FUNCTION public.contacts_add_words()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  tenants UUID[];
  prefixes TEXT[];
  instants TIMESTAMPTZ[];
  words TEXT[];
BEGIN
  SELECT array_agg(a.tenant_id), array_agg(word_prefix(x)), array_agg(a.created_at), array_agg(x)
    INTO tenants, prefixes, instants, words
  FROM added a CROSS JOIN LATERAL contact_words_of(a.search_words) x;
  IF words IS NOT NULL THEN
    INSERT INTO "contact_words" (tenant_id, prefix, created_at, word)
    SELECT * FROM unnest(tenants, prefixes, instants, words);
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.contacts_after_write()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.contacts_before_write()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.contacts_index_words()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM "tenants" t WHERE t.id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  DELETE FROM "contact_words" w
  WHERE w.tenant_id = OLD.tenant_id
    AND (w.prefix, w.created_at, w.word) IN (
      SELECT word_prefix(x), OLD.created_at, x FROM contact_words_of(OLD.search_words) x);
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO "contact_words" (tenant_id, prefix, created_at, word)
    SELECT NEW.tenant_id, word_prefix(x), NEW.created_at, x FROM contact_words_of(NEW.search_words) x;
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.contacts_record_erasure()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "tenants" t WHERE t.id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  UPDATE "events" SET contact = NULL
  WHERE tenant_id = OLD.tenant_id AND contact_id = OLD.id AND contact IS NOT NULL;
  INSERT INTO "events" (tenant_id, txn, n, id, type, occurred_at, contact_id, contact)
  VALUES (OLD.tenant_id, feed_txn(OLD.tenant_id), feed_event_n(), gen_random_uuid(), 'contact.erased'::event_type,
    clock_timestamp(), OLD.id, NULL);
  RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.custom_field_fits(type text, options text[], max_length integer, value jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.custom_fields_lock(tenant uuid)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT hashtextextended('rubrica.custom_fields:' || tenant::TEXT, 0)
$function$;

CREATE OR REPLACE FUNCTION public.delivery_outcome_text(delivery_outcome)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.email_status_text(email_status)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.event_type_text(event_type)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.feed_anchor(tenant uuid)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "event_feeds" WHERE tenant_id = tenant) THEN
    INSERT INTO "event_feeds" (tenant_id) VALUES (tenant) ON CONFLICT DO NOTHING;
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION public.feed_event_n()
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  number BIGINT := COALESCE(NULLIF(current_setting('rubrica.event_n', true), ''), '0')::BIGINT + 1;
BEGIN
  PERFORM set_config('rubrica.event_n', number::TEXT, true);
  RETURN number;
END
$function$;

CREATE OR REPLACE FUNCTION public.feed_txn(tenant uuid)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  current TEXT[] := string_to_array(current_setting('rubrica.txn', true), ' ');
  txn BIGINT;
BEGIN
  IF current[1] = tenant::TEXT THEN
    RETURN current[2]::BIGINT;
  END IF;
  txn := 4611686018427387904 + floor(random() * 4611686018427387903)::BIGINT;
  INSERT INTO "event_commits" (tenant_id, txn) VALUES (tenant, txn);
  PERFORM feed_anchor(tenant);
  PERFORM set_config('rubrica.txn', tenant::TEXT || ' ' || txn::TEXT, true);
  RETURN txn;
END
$function$;

CREATE OR REPLACE FUNCTION public.iso_utc(timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $function$;

CREATE OR REPLACE FUNCTION public.node_clock(uuid)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE PARALLEL SAFE
AS $function$ BEGIN RETURN clock_timestamp(); END $function$;

CREATE OR REPLACE FUNCTION public.phone_digits(text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT regexp_replace($1, '[^0-9]', '', 'g') $function$;

CREATE OR REPLACE FUNCTION public.role_text(role)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.search_split(text)
 RETURNS text[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT COST 200
AS $function$
DECLARE
  separators CONSTANT TEXT := U&'[\\s\00a0\2000-\200a\202f\205f\3000.,;:!?@+_\\-/\\\\()\\[\\]{}<>"#$%&*=|~^'
    || U&'\2010-\2015\00b7\00ab\00bb\201c-\201f\2022\2026\2039\203a\00bf\00a1\3001\3002\ff0c]';
  folded TEXT := lower(translate($1, U&'\2019\2018\02BC\0060\00B4', ''''''''''''));
BEGIN
  -- Only text with characters past ASCII can carry accents.
  IF octet_length(folded) <> length(folded) THEN
    folded := translate(regexp_replace(normalize(folded, NFD), '[\u0300-\u036f]', '', 'g'),
      U&'\0142\00f8\0111\0131\0127\0167\0140\03c2', U&'lodihtl\03c3');
    folded := replace(replace(replace(folded, U&'\00df', 'ss'), U&'\00e6', 'ae'), U&'\0153', 'oe');
  END IF;
  IF strpos(folded, '''') > 0 THEN
    folded := regexp_replace(folded, '(^|' || separators || ')''+|''+($|' || separators || ')', '\1 \2', 'g');
  END IF;
  RETURN array_remove(regexp_split_to_array(folded, separators || '+'), '');
END
$function$;

CREATE OR REPLACE FUNCTION public.search_text(text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT array_to_string(search_split($1), ' ') $function$;

CREATE OR REPLACE FUNCTION public.stage_text(stage)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.tags_follow_name()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE contacts SET tags = array_remove(tags, OLD.name) WHERE tenant_id = OLD.tenant_id AND tags @> ARRAY[OLD.name];
  ELSE
    UPDATE contacts SET tags = array_replace(tags, OLD.name, NEW.name)
    WHERE tenant_id = OLD.tenant_id AND tags @> ARRAY[OLD.name];
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.tags_signature(tags text[])
 RETURNS bigint
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.tenant_status_text(tenant_status)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT textin(enum_out($1)) $function$;

CREATE OR REPLACE FUNCTION public.word_prefix(text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT left($1, 3) $function$;

CREATE TRIGGER contacts_after_delete_erasure AFTER DELETE ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_record_erasure();

CREATE TRIGGER contacts_after_delete_words AFTER DELETE ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_index_words();

CREATE TRIGGER contacts_after_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION contacts_after_write();

CREATE TRIGGER contacts_after_insert_words AFTER INSERT ON contacts REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION contacts_add_words();

CREATE TRIGGER contacts_after_update AFTER UPDATE ON contacts REFERENCING OLD TABLE AS replaced NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION contacts_after_write();

CREATE TRIGGER contacts_after_update_words AFTER UPDATE OF first_name, last_name, email, created_at ON contacts FOR EACH ROW WHEN (old.search_words IS DISTINCT FROM new.search_words OR old.created_at IS DISTINCT FROM new.created_at) EXECUTE FUNCTION contacts_index_words();

CREATE TRIGGER contacts_before_insert BEFORE INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_before_write();

CREATE TRIGGER contacts_before_update BEFORE UPDATE ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_before_write();

CREATE TRIGGER tags_after_delete AFTER DELETE ON tags FOR EACH ROW EXECUTE FUNCTION tags_follow_name();

CREATE TRIGGER tags_after_rename AFTER UPDATE OF name ON tags FOR EACH ROW WHEN (old.name IS DISTINCT FROM new.name) EXECUTE FUNCTION tags_follow_name();
