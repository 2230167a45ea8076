-- The event feed's positions become data: a tenant's committed transactions are numbered in the order they are
-- found committed, by whoever reads the feed first (docs/decisions/0009-feed-positions-as-data.md). Before, a
-- position was the writing transaction's id on its node, and the feed waited for every transaction of the
-- database older than the oldest still running: one tenant's long import held every tenant's feed back, and a
-- tenant whose shards moved to another node met transaction ids of another counter. Now:
--  - each writing transaction registers itself once per tenant in event_commits (txn: a random number, unique for
--    the tenant, which its events carry), from the contacts' triggers or the batch import's statements alike;
--  - a reader (the feed, a webhook's look, a purge) first gives the tenant's committed transactions without a
--    position the next numbers of event_feeds.last_seq, in the order of their last event's clock (a transaction
--    that changed a contact after another had committed its change follows it), under a lock of the tenant's
--    event_feeds row;
--  - a position is (seq, n): the transaction's number and the event's within it. Existing events keep theirs: their
--    transaction's number is its old id, so the positions clients hold still name the same places.
-- The contact's changed_xid and the refusal of late changes (migration contact_change_order) go: the order of a
-- contact's events now follows its changes by construction.

-- On Citus, functions are replaced and columns changed one shard after another.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- CreateTable
CREATE TABLE "event_commits" (
    "tenant_id" UUID NOT NULL,
    "txn" BIGINT NOT NULL,
    "seq" BIGINT,

    CONSTRAINT "event_commits_pkey" PRIMARY KEY ("tenant_id","txn")
);

-- CreateIndex
CREATE UNIQUE INDEX "event_commits_tenant_id_seq_key" ON "event_commits"("tenant_id", "seq");

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM create_distributed_table('event_commits', 'tenant_id', colocate_with => 'tags');
  END IF;
END
$$;

DO $$
BEGIN
  ALTER TABLE "event_commits" ADD CONSTRAINT "event_commits_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
END
$$;

DO $$
BEGIN
  ALTER TABLE "events" RENAME COLUMN "xid" TO "txn";
END
$$;
DO $$
BEGIN
  ALTER TABLE "webhook_cursors" RENAME COLUMN "xid" TO "seq";
END
$$;
DO $$
BEGIN
  ALTER TABLE "event_feeds" RENAME COLUMN "purged_xid" TO "purged_seq";
END
$$;
DO $$
BEGIN
  ALTER TABLE "event_feeds" ADD COLUMN "last_seq" BIGINT NOT NULL DEFAULT 0;
END
$$;

-- The transactions events were recorded by, numbered by their old ids; each tenant's feed goes on from the last.
INSERT INTO "event_commits" ("tenant_id", "txn", "seq")
SELECT "tenant_id", "txn", "txn" FROM "events" GROUP BY "tenant_id", "txn";
INSERT INTO "event_feeds" ("tenant_id", "last_seq")
SELECT "tenant_id", max("txn") FROM "events" GROUP BY "tenant_id"
ON CONFLICT ("tenant_id") DO UPDATE SET "last_seq" = EXCLUDED."last_seq";
-- Every tenant has its feed's row from now on (rubrica tenant create makes it with the tenant): a writing
-- transaction that had to make it would hold back the tenant's other writers until it committed.
INSERT INTO "event_feeds" ("tenant_id") SELECT "id" FROM "tenants" ON CONFLICT DO NOTHING;

-- The tenant's event_feeds row, made if it has none. Looked for first: an INSERT … ON CONFLICT that meets the row
-- while a reader numbers the tenant's transactions (SEQUENCE_SQL updates it) waits for that reader to commit, and
-- every write of the tenant would queue behind the tenant's readers.
CREATE FUNCTION "feed_anchor"(tenant UUID) RETURNS VOID LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "event_feeds" WHERE tenant_id = tenant) THEN
    INSERT INTO "event_feeds" (tenant_id) VALUES (tenant) ON CONFLICT DO NOTHING;
  END IF;
END
$$;

-- The number of the transaction's events of the tenant: made, with the tenant's row in event_commits, at its
-- first event of the tenant, and kept for the transaction (rubrica.txn holds "<tenant> <txn>"). Random in the
-- upper half of bigint: apart from the old ids, and unique for a tenant but by a chance of one in 2^62 a pair.
-- The tenant's event_feeds row, which readers number its transactions from, is made here if the tenant has none
-- (it is made with the tenant).
CREATE FUNCTION "feed_txn"(tenant UUID) RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
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
$$;

-- The next number of an event in this transaction.
CREATE FUNCTION "feed_event_n"() RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  number BIGINT := COALESCE(NULLIF(current_setting('rubrica.event_n', true), ''), '0')::BIGINT + 1;
BEGIN
  PERFORM set_config('rubrica.event_n', number::TEXT, true);
  RETURN number;
END
$$;

CREATE OR REPLACE FUNCTION "contacts_record_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "events" (tenant_id, txn, n, id, type, occurred_at, contact_id, contact)
  VALUES (NEW.tenant_id, feed_txn(NEW.tenant_id), feed_event_n(), gen_random_uuid(),
    (CASE TG_OP WHEN 'INSERT' THEN 'contact.created' ELSE 'contact.updated' END)::event_type,
    clock_timestamp(), NEW.id, to_jsonb(NEW) - 'search_words');
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "contacts_record_erasure"() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;

CREATE OR REPLACE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  asked TEXT;
  previous TEXT[];
  unknown TEXT[];
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
  ELSIF ROW(NEW.*) IS DISTINCT FROM ROW(OLD.*) THEN
    NEW.email_key := lower(NEW.email);
    NEW.version := OLD.version + 1;
    NEW.updated_at := GREATEST(NEW.updated_at, OLD.updated_at + interval '1 millisecond');
  END IF;
  RETURN NEW;
END
$$;

DO $$
BEGIN
  ALTER TABLE "contacts" DROP COLUMN "changed_xid";
END
$$;

-- The clock of the node that runs the statement, for the batch import's events, which readers order by it as they
-- do the triggers' events (clock_timestamp() there). A function of a column in PL/pgSQL, so that Citus runs it on
-- the worker with the row, not once on the coordinator, whose clock is another machine's; the argument is otherwise
-- unused. STABLE so that Citus sends it down with the statement.
CREATE FUNCTION "node_clock"(UUID) RETURNS TIMESTAMPTZ LANGUAGE plpgsql STABLE PARALLEL SAFE
  AS $$ BEGIN RETURN clock_timestamp(); END $$;

DROP FUNCTION "node_xact_id"(UUID);
