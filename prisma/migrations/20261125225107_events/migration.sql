-- CreateEnum
CREATE TYPE "event_type" AS ENUM ('contact.created', 'contact.updated');

-- CreateTable
CREATE TABLE "event_counters" (
    "tenant_id" UUID NOT NULL,
    "last_seq" BIGINT NOT NULL DEFAULT 0,
    "purged_through" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "event_counters_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "events" (
    "tenant_id" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "id" UUID NOT NULL,
    "type" "event_type" NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "contact_id" UUID NOT NULL,
    "contact" JSONB NOT NULL,
    "tags" TEXT[],

    CONSTRAINT "events_pkey" PRIMARY KEY ("tenant_id","seq")
);

-- CreateIndex
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");

-- CreateIndex
CREATE UNIQUE INDEX "events_tenant_id_id_key" ON "events"("tenant_id", "id");

-- AddForeignKey
ALTER TABLE "event_counters" ADD CONSTRAINT "event_counters_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Prisma cannot express triggers (see the first migration). Every change of a contact, whoever makes it (the
-- API, the admin CLI, an import, SQL by hand), records one event per changed row in the same statement, hence in
-- the same transaction: committed together or not at all. The row goes in as JSON with all its columns, so that a
-- column added later needs no change here; the feed shapes it into a Contact with the same select list as GET.
-- Numbers come from the tenant's counter row, locked from this statement until the transaction ends: a tenant's
-- events commit in the order of their numbers. One statement trigger per operation, since transition tables
-- serve one event each. Writers leave a contact alone when nothing would change, so every UPDATE is a change.
CREATE FUNCTION "contacts_record_events"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT n.tenant_id, n.id, to_jsonb(n) AS contact,
      row_number() OVER (PARTITION BY n.tenant_id ORDER BY n.created_at, n.id) AS k
    FROM new_rows n
  ), counters AS (
    INSERT INTO "event_counters" (tenant_id, last_seq)
    SELECT tenant_id, count(*) FROM changed GROUP BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET last_seq = "event_counters".last_seq + EXCLUDED.last_seq
    RETURNING tenant_id, last_seq, last_seq - (SELECT count(*) FROM changed c WHERE c.tenant_id = "event_counters".tenant_id) AS first_seq
  )
  INSERT INTO "events" (tenant_id, seq, id, type, occurred_at, contact_id, contact, tags)
  SELECT c.tenant_id, n.first_seq + c.k, gen_random_uuid(),
    (CASE TG_OP WHEN 'INSERT' THEN 'contact.created' ELSE 'contact.updated' END)::event_type,
    clock_timestamp(), c.id, c.contact,
    ARRAY(SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id
      ORDER BY t.name COLLATE "C")
  FROM changed c JOIN counters n ON n.tenant_id = c.tenant_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER "contacts_after_insert_events" AFTER INSERT ON "contacts"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contacts_record_events"();
CREATE TRIGGER "contacts_after_update_events" AFTER UPDATE ON "contacts"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "contacts_record_events"();
