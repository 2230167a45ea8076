-- Every tenant table keyed by tenant first, so that a distributed PostgreSQL (Citus) can shard the tables by
-- tenant_id and keep each tenant's rows of every table on one node; foreign keys that include tenant_id and never
-- cascade updates; row triggers instead of statement triggers; no lock per tenant taken by any write. Runs alike
-- on PostgreSQL, the embedded PGlite and a Citus coordinator (the last block distributes the tables there only).
-- What the write path does now and why: docs/decisions/0005-writes-without-tenant-locks.md.

-- Casts of the enums to text, and the API's timestamp format, as IMMUTABLE functions: Citus runs an INSERT,
-- UPDATE or DELETE … RETURNING on its nodes only when the RETURNING list holds immutable functions alone, and
-- PostgreSQL calls the output function of an enum (as Prisma's statements cast every enum they return) and
-- to_char() stable, for reasons (a renamed enum value, a locale's month names) that do not apply here.
CREATE FUNCTION "tenant_status_text"("tenant_status") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("tenant_status" AS TEXT) WITH FUNCTION "tenant_status_text"("tenant_status");
CREATE FUNCTION "role_text"("role") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("role" AS TEXT) WITH FUNCTION "role_text"("role");
CREATE FUNCTION "email_status_text"("email_status") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("email_status" AS TEXT) WITH FUNCTION "email_status_text"("email_status");
CREATE FUNCTION "stage_text"("stage") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("stage" AS TEXT) WITH FUNCTION "stage_text"("stage");
CREATE FUNCTION "event_type_text"("event_type") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("event_type" AS TEXT) WITH FUNCTION "event_type_text"("event_type");
-- An instant as the API writes it (ISO 8601, UTC, milliseconds, Z): only digits, so no locale changes it.
CREATE FUNCTION "iso_utc"(TIMESTAMPTZ) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- The old triggers first: they take a lock per tenant and number events from a counter row.
DROP TRIGGER "contacts_before_insert" ON "contacts";
DROP TRIGGER "contacts_before_update_email" ON "contacts";
DROP TRIGGER "contacts_before_update_version" ON "contacts";
DROP TRIGGER "contacts_after_insert_events" ON "contacts";
DROP TRIGGER "contacts_after_update_events" ON "contacts";
DROP FUNCTION "contacts_before_write"();
DROP FUNCTION "contacts_next_version"();
DROP FUNCTION "contacts_record_events"();

-- CreateEnum
CREATE TYPE "delivery_outcome" AS ENUM ('delivered', 'retried', 'given_up');
CREATE FUNCTION "delivery_outcome_text"("delivery_outcome") RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT textin(enum_out($1)) $$;
CREATE CAST ("delivery_outcome" AS TEXT) WITH FUNCTION "delivery_outcome_text"("delivery_outcome");

-- DropForeignKey
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_tenant_id_fkey";
ALTER TABLE "contact_tags" DROP CONSTRAINT "contact_tags_contact_id_fkey";
ALTER TABLE "contact_tags" DROP CONSTRAINT "contact_tags_tag_id_fkey";
ALTER TABLE "contacts" DROP CONSTRAINT "contacts_tenant_id_fkey";
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_tenant_id_webhook_id_fkey";
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_tenant_id_webhook_id_event_seq_fkey";
ALTER TABLE "event_counters" DROP CONSTRAINT "event_counters_tenant_id_fkey";
ALTER TABLE "events" DROP CONSTRAINT "events_tenant_id_fkey";
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_tenant_id_fkey";
ALTER TABLE "tags" DROP CONSTRAINT "tags_tenant_id_fkey";
ALTER TABLE "webhooks" DROP CONSTRAINT "webhooks_tenant_id_fkey";

-- DropIndex
DROP INDEX "api_keys_key_hash_key";
DROP INDEX "api_keys_tenant_id_idx";
DROP INDEX "contact_tags_tag_id_idx";
DROP INDEX "events_occurred_at_idx";
DROP INDEX "idempotency_keys_created_at_idx";

-- Primary keys led by tenant_id.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_pkey",
ADD CONSTRAINT "api_keys_pkey" PRIMARY KEY ("tenant_id", "id");

ALTER TABLE "tags" DROP CONSTRAINT "tags_pkey",
ADD CONSTRAINT "tags_pkey" PRIMARY KEY ("tenant_id", "id");

-- created_at's and acquired_at's defaults say "not given": the trigger then takes the clock, and the creation
-- instant. (A function as the default cannot say it: Citus evaluates defaults where it plans the statement, not
-- on the node the trigger runs on, and pushes no INSERT … SELECT down to one node into a table with a volatile
-- default.) A contact's tags become a column of its row, the answers' source: one statement reads or writes a
-- contact whole, on one node.
ALTER TABLE "contacts" DROP CONSTRAINT "contacts_pkey",
ALTER COLUMN "created_at" SET DEFAULT '-infinity',
ALTER COLUMN "acquired_at" SET DEFAULT '-infinity',
ADD COLUMN "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
ADD CONSTRAINT "contacts_pkey" PRIMARY KEY ("tenant_id", "id");
UPDATE "contacts" c SET "tags" = ARRAY(SELECT t."name" FROM "contact_tags" ct JOIN "tags" t ON t."id" = ct."tag_id"
  WHERE ct."contact_id" = c."id" ORDER BY t."name" COLLATE "C")
WHERE EXISTS (SELECT 1 FROM "contact_tags" ct WHERE ct."contact_id" = c."id");

-- A tag link carries its tenant, taken from its contact.
ALTER TABLE "contact_tags" DROP CONSTRAINT "contact_tags_pkey", ADD COLUMN "tenant_id" UUID;
UPDATE "contact_tags" ct SET "tenant_id" = c."tenant_id" FROM "contacts" c WHERE c."id" = ct."contact_id";
ALTER TABLE "contact_tags" ALTER COLUMN "tenant_id" SET NOT NULL,
ADD CONSTRAINT "contact_tags_pkey" PRIMARY KEY ("tenant_id", "contact_id", "tag_id");

-- Events keep their numbers as positions: (xid 0, n = the old number), before every position to come.
ALTER TABLE "events" DROP CONSTRAINT "events_pkey",
ADD COLUMN "xid" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "n" BIGINT;
UPDATE "events" SET "n" = "seq", "contact" = "contact" || jsonb_build_object('tags', COALESCE("tags", '{}'));
ALTER TABLE "events" ALTER COLUMN "xid" DROP DEFAULT, ALTER COLUMN "n" SET NOT NULL, DROP COLUMN "seq", DROP COLUMN "tags",
ADD CONSTRAINT "events_pkey" PRIMARY KEY ("tenant_id", "xid", "n");

-- What a tenant's feed has lost to the retention, in positions.
CREATE TABLE "event_feeds" (
    "tenant_id" UUID NOT NULL,
    "purged_xid" BIGINT NOT NULL DEFAULT 0,
    "purged_n" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "event_feeds_pkey" PRIMARY KEY ("tenant_id")
);
INSERT INTO "event_feeds" ("tenant_id", "purged_n")
SELECT "tenant_id", "purged_through" FROM "event_counters" WHERE "purged_through" > 0;

-- Webhooks follow the feed from a position of their own; a failed event waits in delivery_retries.
CREATE TABLE "webhook_cursors" (
    "tenant_id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "xid" BIGINT NOT NULL,
    "n" BIGINT NOT NULL,
    "leased_until" TIMESTAMPTZ(3),
    "lease_id" UUID,

    CONSTRAINT "webhook_cursors_pkey" PRIMARY KEY ("tenant_id","webhook_id")
);

CREATE TABLE "delivery_retries" (
    "tenant_id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "delivery_retries_pkey" PRIMARY KEY ("tenant_id","webhook_id","event_id")
);

-- Existing webhooks start at the end of their tenant's feed; what they had still to deliver is due at once.
INSERT INTO "webhook_cursors" ("tenant_id", "webhook_id", "xid", "n")
SELECT w."tenant_id", w."id", 0, COALESCE(k."last_seq", 0)
FROM "webhooks" w LEFT JOIN "event_counters" k ON k."tenant_id" = w."tenant_id";
INSERT INTO "delivery_retries" ("tenant_id", "webhook_id", "event_id", "attempts", "next_attempt_at")
SELECT "tenant_id", "webhook_id", "event_id", "attempts", "next_attempt_at" FROM "deliveries" WHERE "state" = 'pending';

-- Each attempt of the log says what came of it, read from its delivery while that table still exists.
ALTER TABLE "delivery_attempts" ADD COLUMN "outcome" "delivery_outcome";
UPDATE "delivery_attempts" a SET "outcome" = CASE
    WHEN a."error" IS NULL THEN 'delivered'
    WHEN d."state" = 'failed' AND a."attempt" = d."attempts" THEN 'given_up'
    ELSE 'retried' END::"delivery_outcome"
FROM "deliveries" d
WHERE d."tenant_id" = a."tenant_id" AND d."webhook_id" = a."webhook_id" AND d."event_seq" = a."event_seq";
UPDATE "delivery_attempts" SET "outcome" = CASE WHEN "error" IS NULL THEN 'delivered' ELSE 'retried' END::"delivery_outcome"
WHERE "outcome" IS NULL;
-- An event delivered twice (a lease that ran out) keeps its latest attempt numbers only once.
DELETE FROM "delivery_attempts" a USING "delivery_attempts" b
WHERE a."tenant_id" = b."tenant_id" AND a."webhook_id" = b."webhook_id" AND a."event_id" = b."event_id"
  AND a."attempt" = b."attempt" AND a."event_seq" < b."event_seq";
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_pkey",
DROP COLUMN "event_seq",
ALTER COLUMN "outcome" SET NOT NULL,
ADD CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("tenant_id", "webhook_id", "event_id", "attempt");

-- DropTable
DROP TABLE "deliveries";
DROP TABLE "event_counters";

-- DropEnum
DROP TYPE "delivery_state";

-- CreateIndex
CREATE INDEX "delivery_retries_tenant_id_webhook_id_next_attempt_at_idx" ON "delivery_retries"("tenant_id", "webhook_id", "next_attempt_at");
CREATE INDEX "api_keys_key_hash_idx" ON "api_keys"("key_hash");
CREATE INDEX "contact_tags_tenant_id_tag_id_idx" ON "contact_tags"("tenant_id", "tag_id");
CREATE INDEX "delivery_attempts_tenant_id_at_idx" ON "delivery_attempts"("tenant_id", "at");
CREATE INDEX "events_tenant_id_contact_id_idx" ON "events"("tenant_id", "contact_id");
CREATE INDEX "idempotency_keys_tenant_id_created_at_idx" ON "idempotency_keys"("tenant_id", "created_at");

-- Prisma cannot express triggers; its schema diff ignores them, so they live only here.
--
-- Before each row is written: the lower-cased email that the per-tenant unique key compares (Ann@x.io and
-- ann@x.io are one contact); its tags without repeats, in code-point order, each a tag of the tenant (an unknown
-- name fails the statement with SQLSTATE RB001 and the unknown names, as JSON, in the detail); on insert, the
-- instants not given (their defaults say so), and updated_at never before created_at; on update, a version that
-- moves on every change of the row, whoever makes it (the contact's ETag). createdAt needs no lock: every row
-- takes the clock as it is written, and the unique key on (tenant_id, created_at) turns the rare collision
-- between two sessions into an insert that fails or is skipped (ON CONFLICT), which the writer retries. Within one
-- session, an insert that asks for the very instant the previous one asked for (a clock that counts
-- milliseconds, as the embedded database's does; a bulk insert that gives every row the same instant) moves a
-- microsecond past the instant that one got.
CREATE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
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
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "contacts_before_insert" BEFORE INSERT ON "contacts"
  FOR EACH ROW EXECUTE FUNCTION "contacts_before_write"();
CREATE TRIGGER "contacts_before_update" BEFORE UPDATE ON "contacts"
  FOR EACH ROW EXECUTE FUNCTION "contacts_before_write"();

-- contact_tags follows contacts.tags: a link per tag of the contact, for joins and SQL by hand.
CREATE FUNCTION "contacts_link_tags"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  added TEXT[] := NEW.tags;
  removed TEXT[] := '{}';
BEGIN
  IF TG_OP = 'UPDATE' THEN
    added := ARRAY(SELECT unnest(NEW.tags) EXCEPT SELECT unnest(OLD.tags));
    removed := ARRAY(SELECT unnest(OLD.tags) EXCEPT SELECT unnest(NEW.tags));
  END IF;
  IF cardinality(added) > 0 THEN
    INSERT INTO contact_tags (tenant_id, contact_id, tag_id)
    SELECT t.tenant_id, NEW.id, t.id FROM tags t WHERE t.tenant_id = NEW.tenant_id AND t.name = ANY(added)
    ON CONFLICT DO NOTHING;
  END IF;
  IF cardinality(removed) > 0 THEN
    DELETE FROM contact_tags ct USING tags t
    WHERE ct.tenant_id = NEW.tenant_id AND ct.contact_id = NEW.id AND t.tenant_id = NEW.tenant_id
      AND t.id = ct.tag_id AND t.name = ANY(removed);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "contacts_after_insert_tags" AFTER INSERT ON "contacts"
  FOR EACH ROW WHEN (cardinality(NEW.tags) > 0) EXECUTE FUNCTION "contacts_link_tags"();
CREATE TRIGGER "contacts_after_update_tags" AFTER UPDATE OF "tags" ON "contacts"
  FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION "contacts_link_tags"();

-- A tag renamed or deleted by hand (rubrica does neither) is renamed in, or taken out of, its contacts' tags.
CREATE FUNCTION "tags_follow_name"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE contacts SET tags = array_remove(tags, OLD.name) WHERE tenant_id = OLD.tenant_id AND tags @> ARRAY[OLD.name];
  ELSE
    UPDATE contacts SET tags = array_replace(tags, OLD.name, NEW.name)
    WHERE tenant_id = OLD.tenant_id AND tags @> ARRAY[OLD.name];
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "tags_after_delete" AFTER DELETE ON "tags"
  FOR EACH ROW EXECUTE FUNCTION "tags_follow_name"();
CREATE TRIGGER "tags_after_rename" AFTER UPDATE OF "name" ON "tags"
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION "tags_follow_name"();

-- Every change of a contact, whoever makes it (the API, the admin CLI, an import, SQL by hand), records one event
-- in the transaction that made it: the row as JSON with all its columns (a column added later needs no change
-- here), which the feed shapes into a Contact with GET's select list. Its position in the tenant's feed is
-- (xid, n): the transaction's id, and its events numbered from 1 in the order they are recorded. Nothing is
-- locked: the feed serves only events of transactions older than every one of this database still running
-- (src/events/sql.ts), so a position once served is never passed by an event committed later.
CREATE FUNCTION "contacts_record_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  number BIGINT := COALESCE(NULLIF(current_setting('rubrica.event_n', true), ''), '0')::BIGINT + 1;
BEGIN
  PERFORM set_config('rubrica.event_n', number::TEXT, true);
  INSERT INTO "events" (tenant_id, xid, n, id, type, occurred_at, contact_id, contact)
  VALUES (NEW.tenant_id, pg_current_xact_id()::TEXT::BIGINT, number, gen_random_uuid(),
    (CASE TG_OP WHEN 'INSERT' THEN 'contact.created' ELSE 'contact.updated' END)::event_type,
    clock_timestamp(), NEW.id, to_jsonb(NEW));
  RETURN NULL;
END
$$;

CREATE TRIGGER "contacts_after_insert_event" AFTER INSERT ON "contacts"
  FOR EACH ROW EXECUTE FUNCTION "contacts_record_event"();
-- An UPDATE that changes nothing records nothing.
CREATE TRIGGER "contacts_after_update_event" AFTER UPDATE ON "contacts"
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "contacts_record_event"();

-- On a Citus coordinator (and nowhere else): the tenants, their API keys and their webhooks are reference tables,
-- copied to every node (keys are found before their tenant is known; every instance's deliverer lists the
-- webhooks of all tenants); every other table is distributed by tenant_id, co-located with tags, so that each
-- tenant's rows of every table live on one node and every statement of one tenant runs there. Citus refuses
-- triggers on distributed tables unless citus.enable_unsafe_triggers is on (docs/operations.md, "Running on
-- Citus": they are safe here because they only touch co-located rows of the same tenant).
DO $$
DECLARE
  distributed TEXT[] := ARRAY['tags', 'contacts', 'contact_tags', 'idempotency_keys', 'event_feeds', 'events',
    'webhook_cursors', 'delivery_retries', 'delivery_attempts'];
  name TEXT;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  IF current_setting('citus.enable_unsafe_triggers') <> 'on' THEN
    RAISE EXCEPTION 'rubrica on Citus needs citus.enable_unsafe_triggers = on on every node (docs/operations.md, "Running on Citus")';
  END IF;
  PERFORM create_reference_table('tenants');
  PERFORM create_reference_table('api_keys');
  PERFORM create_reference_table('webhooks');
  FOREACH name IN ARRAY distributed LOOP
    IF name = 'tags' THEN
      PERFORM create_distributed_table(name, 'tenant_id');
    ELSE
      PERFORM create_distributed_table(name, 'tenant_id', colocate_with => 'tags');
    END IF;
  END LOOP;
END
$$;

-- Foreign keys, added after the tables are distributed (Citus distributes no table that a local table refers to,
-- nor one that refers to a local table): each includes tenant_id, deletes cascade, updates never do.
-- In a DO block: Citus sends DDL on a distributed table to the workers as the text of the command, which must be
-- one command, not the whole script.
DO $$
BEGIN
  ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "tags" ADD CONSTRAINT "tags_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "contacts" ADD CONSTRAINT "contacts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "contact_tags" ADD CONSTRAINT "contact_tags_tenant_id_contact_id_fkey" FOREIGN KEY ("tenant_id", "contact_id") REFERENCES "contacts"("tenant_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "contact_tags" ADD CONSTRAINT "contact_tags_tenant_id_tag_id_fkey" FOREIGN KEY ("tenant_id", "tag_id") REFERENCES "tags"("tenant_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "event_feeds" ADD CONSTRAINT "event_feeds_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "webhook_cursors" ADD CONSTRAINT "webhook_cursors_tenant_id_webhook_id_fkey" FOREIGN KEY ("tenant_id", "webhook_id") REFERENCES "webhooks"("tenant_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "delivery_retries" ADD CONSTRAINT "delivery_retries_tenant_id_webhook_id_fkey" FOREIGN KEY ("tenant_id", "webhook_id") REFERENCES "webhooks"("tenant_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_tenant_id_webhook_id_fkey" FOREIGN KEY ("tenant_id", "webhook_id") REFERENCES "webhooks"("tenant_id", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
END
$$;
