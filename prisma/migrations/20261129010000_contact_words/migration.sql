-- The words of each contact by their first three characters, in the order of the contacts' createdAt: where a
-- search's words (`q`) find a page of their matches in order, reading the matches and not the contacts passed
-- over (docs/decisions/0008-search-indexes.md, "Words in the contacts' order"). One row per word of search_words
-- (names and email; the phone's digits are not words of `q`), beside its contact's createdAt, which is unique for
-- the tenant and finds the contact (contacts_tenant_id_created_at_key): no contact id is needed. Triggers on
-- contacts keep it, for every write alike (single, batch, the admin CLI): a row's words change when its names,
-- email or createdAt do, and go when it is deleted (an erasure takes them with the contact).

-- On Citus, functions are replaced and triggers created one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- CreateTable
CREATE TABLE "contact_words" (
    "tenant_id" UUID NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "word" TEXT NOT NULL,

    CONSTRAINT "contact_words_pkey" PRIMARY KEY ("tenant_id","prefix","created_at","word")
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM create_distributed_table('contact_words', 'tenant_id', colocate_with => 'tags');
  END IF;
END
$$;

DO $$
BEGIN
  ALTER TABLE "contact_words" ADD CONSTRAINT "contact_words_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
END
$$;

-- The words of a contact's search_words that contact_words holds: all but the phone's ("+" and its digits). A set
-- returning SQL function, which PostgreSQL inlines where it is read (FROM, LATERAL): no call per contact.
CREATE FUNCTION "contact_words_of"(words TSVECTOR) RETURNS SETOF TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT w FROM unnest(tsvector_to_array(words)) w WHERE left(w, 1) <> '+'
$$;

-- The key of a word in contact_words: its first three characters (the word itself when shorter).
CREATE FUNCTION "word_prefix"(TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT left($1, 3) $$;

-- The words of the contacts a statement inserted, in one INSERT for all of them (a batch's 1,000 included): a
-- statement trigger, with the statement's new rows. They are read into arrays first: on Citus, an INSERT into a
-- distributed table cannot read the trigger's rows (a tuplestore of this node's executor), but it takes arrays.
CREATE FUNCTION "contacts_add_words"() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;

-- A contact's old words out and, on an update, its new words in. The rows are found by their whole key: no other
-- index is needed. A contact deleted because its tenant is (a cascade) leaves its words to the tenant's own cascade.
CREATE FUNCTION "contacts_index_words"() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;

-- In DO blocks: on Citus each trigger is created on every shard of contacts from the text of one command.
DO $$
BEGIN
  CREATE TRIGGER "contacts_after_insert_words" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "contacts_add_words"();
END
$$;
DO $$
BEGIN
  CREATE TRIGGER "contacts_after_update_words" AFTER UPDATE OF "first_name", "last_name", "email", "created_at" ON "contacts"
    FOR EACH ROW WHEN (OLD.search_words IS DISTINCT FROM NEW.search_words OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION "contacts_index_words"();
END
$$;
DO $$
BEGIN
  CREATE TRIGGER "contacts_after_delete_words" AFTER DELETE ON "contacts"
    FOR EACH ROW EXECUTE FUNCTION "contacts_index_words"();
END
$$;

-- The contacts already written.
INSERT INTO "contact_words" (tenant_id, prefix, created_at, word)
SELECT c.tenant_id, word_prefix(x), c.created_at, x FROM "contacts" c CROSS JOIN LATERAL contact_words_of(c.search_words) x;
