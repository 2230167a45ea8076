-- CreateEnum
CREATE TYPE "delivery_state" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "webhooks" (
    "tenant_id" UUID NOT NULL,
    "id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "events" "event_type"[],
    "description" TEXT,
    "secret" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("tenant_id","id")
);

-- CreateTable
CREATE TABLE "deliveries" (
    "tenant_id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_seq" BIGINT NOT NULL,
    "event_id" UUID NOT NULL,
    "state" "delivery_state" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leased_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("tenant_id","webhook_id","event_seq")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "tenant_id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_seq" BIGINT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "event_id" UUID NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("tenant_id","webhook_id","event_seq","attempt")
);

-- CreateIndex
CREATE INDEX "deliveries_state_next_attempt_at_idx" ON "deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "deliveries_created_at_idx" ON "deliveries"("created_at");

-- CreateIndex
CREATE INDEX "delivery_attempts_tenant_id_webhook_id_at_idx" ON "delivery_attempts"("tenant_id", "webhook_id", "at" DESC);

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_tenant_id_webhook_id_fkey" FOREIGN KEY ("tenant_id", "webhook_id") REFERENCES "webhooks"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_tenant_id_webhook_id_event_seq_fkey" FOREIGN KEY ("tenant_id", "webhook_id", "event_seq") REFERENCES "deliveries"("tenant_id", "webhook_id", "event_seq") ON DELETE CASCADE ON UPDATE CASCADE;

-- The events trigger also writes what is to be delivered: one delivery per event and webhook of its tenant that
-- wants its type, in the same statement as the event, so that a committed change is never without its deliveries
-- and a rolled-back one has none. Nothing else changes from the events migration.
CREATE OR REPLACE FUNCTION "contacts_record_events"() RETURNS trigger LANGUAGE plpgsql AS $$
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
  ), recorded AS (
    INSERT INTO "events" (tenant_id, seq, id, type, occurred_at, contact_id, contact, tags)
    SELECT c.tenant_id, n.first_seq + c.k, gen_random_uuid(),
      (CASE TG_OP WHEN 'INSERT' THEN 'contact.created' ELSE 'contact.updated' END)::event_type,
      clock_timestamp(), c.id, c.contact,
      ARRAY(SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id
        ORDER BY t.name COLLATE "C")
    FROM changed c JOIN counters n ON n.tenant_id = c.tenant_id
    RETURNING tenant_id, seq, id, type
  )
  INSERT INTO "deliveries" (tenant_id, webhook_id, event_seq, event_id)
  SELECT r.tenant_id, w.id, r.seq, r.id
  FROM recorded r JOIN "webhooks" w ON w.tenant_id = r.tenant_id AND r.type = ANY(w.events);
  RETURN NULL;
END
$$;

-- Due deliveries are looked for among the pending ones only.
CREATE INDEX "deliveries_due_idx" ON "deliveries" ("next_attempt_at") WHERE state = 'pending';

-- The deliveries leased right now (few: a lease ends with its attempt), for the claim to pass over their webhooks.
CREATE INDEX "deliveries_leased_idx" ON "deliveries" ("tenant_id", "webhook_id") WHERE state = 'pending' AND leased_until IS NOT NULL;
