-- Search over a tenant's contacts: the list's filters and POST /api/v1/contacts/search (docs/api-search.md). The
-- contact's words (names, email, phone digits), folded as search compares them, stored with it as a tsvector; GIN
-- indexes of (tenant_id, search_words) and (tenant_id, tags), each key beside its tenant (btree_gin), so that a
-- bitmap reads one tenant's matches alone; and createdAt's twin for updatedAt. Why this layout and what it costs
-- writes: docs/decisions/0008-search-indexes.md.

-- GIN operator classes for the B-tree types (uuid here): a GIN index that holds the tenant with each key. A
-- contrib extension of PostgreSQL, shipped with Debian's server packages, with PGlite (loaded by src/db/database.ts)
-- and on every Citus node (which creates it on the workers).
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- The words of a text as search compares them: lower case; typographic apostrophes made '; accents taken off
-- (decomposed, combining marks dropped: "Nicolò" is "nicolo"), and letters that carry their mark inside made plain
-- ("ł" "l", "ø" "o", "ß" "ss", final "ς" "σ"); split at white space and punctuation other than the apostrophe
-- (dashes, dots, quotes, guillemets included), apostrophes at a word's ends dropped ("d'angelo" stays one word).
-- Built from PostgreSQL's own functions, with no extension for it.
CREATE FUNCTION "search_split"(TEXT) RETURNS TEXT[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 200 AS $$
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
$$;

-- A text's words joined by one space: what eq, in and prefix compare on text fields.
CREATE FUNCTION "search_text"(TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT array_to_string(search_split($1), ' ') $$;

-- A phone number's digits: what phone filters compare.
CREATE FUNCTION "phone_digits"(TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT regexp_replace($1, '[^0-9]', '', 'g') $$;

-- A contact's words as search_words stores them: each word of its names and email, and of a word with an
-- apostrophe also what follows it and the word without it ("d'angelo": "angelo", "dangelo"); and its phone's digits,
-- after a "+" (no word holds one). Its search_path is the migration's: a stored column is also computed where
-- PostgreSQL 17 runs with a search_path of its own (a table rewrite, a restore).
CREATE FUNCTION "contact_search_words"(first_name TEXT, last_name TEXT, email TEXT, phone TEXT)
  RETURNS TSVECTOR LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path FROM CURRENT AS $$
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
$$;

-- A tsquery for @@ on search_words: any text of `texts` (|) whose every word (&) is one of the contact's, or, with
-- `prefix`, the start of one (a text's words come in order: the caller checks the order). Null when no text has a
-- word (the API's values have one).
CREATE FUNCTION "contact_words_match"(texts TEXT[], prefix BOOLEAN) RETURNS TSQUERY
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg(t.words, ' | ')::TSQUERY FROM (
    SELECT '(' || string_agg('''' || replace(w, '''', '''''') || '''' || CASE WHEN prefix THEN ':*' ELSE '' END,
      ' & ') || ')' AS words
    FROM unnest(texts) WITH ORDINALITY AS v(text, i) CROSS JOIN LATERAL unnest(search_split(v.text)) AS w
    GROUP BY v.i) t
$$;

-- A tsquery for @@ on search_words: phones with the digits of `phones` (with `prefix`, starting with them).
CREATE FUNCTION "contact_phone_match"(phones TEXT[], prefix BOOLEAN) RETURNS TSQUERY
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg('''+' || phone_digits(p) || '''' || CASE WHEN prefix THEN ':*' ELSE '' END, ' | ')::TSQUERY
  FROM unnest(phones) p WHERE phone_digits(p) <> ''
$$;

-- In DO blocks: Citus sends DDL on a distributed table to its shards as the text of one command.
DO $$
BEGIN
  ALTER TABLE "contacts" ADD COLUMN "search_words" TSVECTOR
    GENERATED ALWAYS AS (contact_search_words("first_name", "last_name", "email", "phone")) STORED;
END
$$;
DO $$
BEGIN
  CREATE INDEX "contacts_search_words_idx" ON "contacts" USING gin ("tenant_id", "search_words");
END
$$;
DO $$
BEGIN
  CREATE INDEX "contacts_tags_idx" ON "contacts" USING gin ("tenant_id", "tags");
END
$$;
DO $$
BEGIN
  CREATE INDEX "contacts_tenant_id_updated_at_created_at_idx" ON "contacts"("tenant_id", "updated_at" DESC, "created_at" DESC);
END
$$;
