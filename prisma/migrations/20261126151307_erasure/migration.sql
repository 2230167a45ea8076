-- Erasure of a contact at its person's request (issue #31; docs/api.md, "Erasure and export"). Deleting a contact
-- row, by the API, the admin CLI or SQL by hand, now erases it: a trigger empties the contact snapshot of each of
-- its events and records a contact.erased event in its place in the feed. The application records the erasure
-- (erasures: which contact, when, by which key; no personal data) and the keyed hash of its email
-- (erased_emails), which a create may not bring back. Runs alike on PostgreSQL, the embedded PGlite and a Citus
-- coordinator.

-- The new event type, and events whose contact is gone. In a DO block: Citus sends DDL on a distributed table (and
-- on a type such tables use) to the workers as the text of one command, not the whole script.
DO $$
BEGIN
  ALTER TYPE "event_type" ADD VALUE 'contact.erased';
  ALTER TABLE "events" ALTER COLUMN "contact" DROP NOT NULL;
END
$$;

-- CreateTable
CREATE TABLE "erasures" (
    "tenant_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "key_id" UUID,
    "source" TEXT NOT NULL,

    CONSTRAINT "erasures_pkey" PRIMARY KEY ("tenant_id","contact_id")
);

-- CreateTable
CREATE TABLE "erased_emails" (
    "tenant_id" UUID NOT NULL,
    "email_hash" CHAR(64) NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "erased_emails_pkey" PRIMARY KEY ("tenant_id","email_hash")
);

-- On a Citus coordinator only: both tables distributed by tenant_id, co-located with the others, so that the
-- erasure's statements and the creates' checks run on the tenant's node.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  PERFORM create_distributed_table('erasures', 'tenant_id', colocate_with => 'tags');
  PERFORM create_distributed_table('erased_emails', 'tenant_id', colocate_with => 'tags');
END
$$;

-- Foreign keys, after the tables are distributed (as in the migration distribution_by_tenant).
DO $$
BEGIN
  ALTER TABLE "erasures" ADD CONSTRAINT "erasures_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
  ALTER TABLE "erased_emails" ADD CONSTRAINT "erased_emails_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
END
$$;

-- A contact deleted, whoever deletes it, is erased from its events: each keeps its id, type, time and position in
-- the feed, and loses the snapshot of the contact (the feed then shows {"id", "erased": true} in its place); and a
-- contact.erased event (its contact null too) tells followers and webhooks, numbered within its transaction as
-- contacts_record_event numbers events, on the node that holds the tenant's rows. A contact deleted because its
-- tenant is (a cascade) records nothing: the tenant's events go with it.
CREATE FUNCTION "contacts_record_erasure"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  number BIGINT;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "tenants" t WHERE t.id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  UPDATE "events" SET contact = NULL
  WHERE tenant_id = OLD.tenant_id AND contact_id = OLD.id AND contact IS NOT NULL;
  number := COALESCE(NULLIF(current_setting('rubrica.event_n', true), ''), '0')::BIGINT + 1;
  PERFORM set_config('rubrica.event_n', number::TEXT, true);
  INSERT INTO "events" (tenant_id, xid, n, id, type, occurred_at, contact_id, contact)
  VALUES (OLD.tenant_id, pg_current_xact_id()::TEXT::BIGINT, number, gen_random_uuid(), 'contact.erased'::event_type,
    clock_timestamp(), OLD.id, NULL);
  RETURN NULL;
END
$$;

-- In a DO block: on Citus the trigger is created on every shard of contacts from the text of one command.
DO $$
BEGIN
  CREATE TRIGGER "contacts_after_delete_erasure" AFTER DELETE ON "contacts"
    FOR EACH ROW EXECUTE FUNCTION "contacts_record_erasure"();
END
$$;
