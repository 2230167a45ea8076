-- Search over a tenant's contacts: the list's filters and POST /api/v1/contacts/search (docs/api-search.md). Two
-- GIN indexes of keys qualified by the tenant's id, so that one tenant's tags and words never share an index entry,
-- nor statistics, with another's: a tag common elsewhere stays rare where it is rare. And createdAt's twin for
-- updatedAt. Why this layout and what it costs writes: docs/decisions/0008-search-indexes.md.

-- The words of a text as search compares them: typographic apostrophes made ', accents taken off (decomposed,
-- combining marks dropped: "Nicolò" is "nicolo"), lower case, split at white space and punctuation other than the
-- apostrophe, apostrophes at a word's ends dropped ("d'angelo" stays one word). Only the database's own functions,
-- whatever extensions a server has.
CREATE FUNCTION "search_split"(TEXT) RETURNS TEXT[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 200 AS $$
DECLARE
  folded TEXT := translate($1, U&'\2019\2018\02BC\0060\00B4', '''''''''''');
BEGIN
  -- Only text with characters past ASCII can carry accents.
  IF octet_length(folded) <> length(folded) THEN
    folded := regexp_replace(normalize(folded, NFD), '[\u0300-\u036f]', '', 'g');
  END IF;
  IF strpos(folded, '''') > 0 THEN
    folded := regexp_replace(folded, '(^|[\s\u00a0\u2000-\u200a\u202f\u205f\u3000.,;:!?@+_\-/\\()\[\]{}<>"#$%&*=|~^])''+|'
      '''+($|[\s\u00a0\u2000-\u200a\u202f\u205f\u3000.,;:!?@+_\-/\\()\[\]{}<>"#$%&*=|~^])', '\1 \2', 'g');
  END IF;
  RETURN array_remove(regexp_split_to_array(lower(folded),
    '[\s\u00a0\u2000-\u200a\u202f\u205f\u3000.,;:!?@+_\-/\\()\[\]{}<>"#$%&*=|~^]+'), '');
END
$$;

-- A text's words joined by one space: what eq, in and prefix compare on text fields.
CREATE FUNCTION "search_text"(TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT array_to_string(search_split($1), ' ') $$;

-- A phone number's digits: what phone filters compare.
CREATE FUNCTION "phone_digits"(TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT regexp_replace($1, '[^0-9]', '', 'g') $$;

-- A contact's words as index keys: each word of its names and email, and of a word with an apostrophe also what
-- follows it and the word without it ("d'angelo": "angelo", "dangelo"); and its phone's digits, after a "+"
-- (no word holds one). Each key starts with the tenant's id. Its search_path is the migration's: an index
-- expression is also computed by ANALYZE and VACUUM, which PostgreSQL 17 runs with a search_path of its own.
CREATE FUNCTION "contact_words"(tenant UUID, first_name TEXT, last_name TEXT, email TEXT, phone TEXT)
  RETURNS TSVECTOR LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 500 SET search_path FROM CURRENT AS $$
DECLARE
  owner TEXT := tenant::TEXT;
  words TEXT[] := search_split(concat_ws(' ', first_name, last_name, email));
  keys TEXT[] := '{}';
  word TEXT;
  digits TEXT := phone_digits(phone);
BEGIN
  IF cardinality(words) > 0 THEN
    keys := string_to_array(owner || array_to_string(words, E'\n' || owner), E'\n');
    IF strpos(array_to_string(words, ' '), '''') > 0 THEN
      FOREACH word IN ARRAY words LOOP
        IF strpos(word, '''') > 0 THEN
          keys := keys || (owner || replace(word, '''', '')) || (owner || substr(word, strpos(word, '''') + 1));
        END IF;
      END LOOP;
    END IF;
  END IF;
  IF digits <> '' THEN
    keys := keys || (owner || '+' || digits);
  END IF;
  RETURN array_to_tsvector(keys);
END
$$;

-- What contact_words holds of `words` given in `texts`, for @@: any text (|) whose every word (&) is a key, or,
-- with `prefix`, the start of one (a text's words are their order's prefix: the caller checks the order).
CREATE FUNCTION "contact_words_match"(tenant UUID, texts TEXT[], prefix BOOLEAN) RETURNS TSQUERY
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg(t.words, ' | ')::TSQUERY FROM (
    SELECT '(' || string_agg('''' || replace(tenant::TEXT || w, '''', '''''') || '''' ||
      CASE WHEN prefix THEN ':*' ELSE '' END, ' & ') || ')' AS words
    FROM unnest(texts) WITH ORDINALITY AS v(text, i) CROSS JOIN LATERAL unnest(search_split(v.text)) AS w
    GROUP BY v.i) t
$$;

-- What contact_words holds of phones with the digits of `phones` (or, with `prefix`, starting with them), for @@.
CREATE FUNCTION "contact_phone_match"(tenant UUID, phones TEXT[], prefix BOOLEAN) RETURNS TSQUERY
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg('''' || tenant::TEXT || '+' || phone_digits(p) || '''' || CASE WHEN prefix THEN ':*' ELSE '' END,
    ' | ')::TSQUERY
  FROM unnest(phones) p WHERE phone_digits(p) <> ''
$$;

-- A contact's tags as index keys, each after the tenant's id; the same of the tags a search names, for @> and &&.
CREATE FUNCTION "contact_tag_keys"(tenant UUID, tags TEXT[]) RETURNS TEXT[] LANGUAGE plpgsql IMMUTABLE STRICT
  PARALLEL SAFE COST 50 AS $$
DECLARE
  owner TEXT := tenant::TEXT;
  keys TEXT[] := '{}';
  tag TEXT;
BEGIN
  FOREACH tag IN ARRAY tags LOOP
    keys := keys || (owner || tag);
  END LOOP;
  RETURN keys;
END
$$;

-- In DO blocks: Citus sends DDL on a distributed table to its shards as the text of one command.
DO $$
BEGIN
  CREATE INDEX "contacts_words_idx" ON "contacts"
    USING gin (contact_words("tenant_id", "first_name", "last_name", "email", "phone"));
END
$$;
DO $$
BEGIN
  CREATE INDEX "contacts_tag_keys_idx" ON "contacts" USING gin (contact_tag_keys("tenant_id", "tags"));
END
$$;
DO $$
BEGIN
  CREATE INDEX "contacts_tenant_id_updated_at_created_at_idx" ON "contacts"("tenant_id", "updated_at" DESC, "created_at" DESC);
END
$$;
