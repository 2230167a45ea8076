-- A stored Idempotency-Key answer names the contacts it holds, so that an erasure finds the answers to drop through
-- an index (GIN beside the tenant, btree_gin) instead of reading every answer the tenant stored: its cost, and the
-- time it holds its transaction, no longer grow with them (issue "Changes arrive within a second"). The answers kept
-- now name theirs from the ids their bodies hold.

DO $$
BEGIN
  ALTER TABLE "idempotency_keys" ADD COLUMN "contact_ids" UUID[] DEFAULT ARRAY[]::UUID[];
END
$$;

UPDATE "idempotency_keys" SET "contact_ids" = ARRAY(
  SELECT DISTINCT m[1]::UUID FROM regexp_matches("body", '"id":"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"', 'g') m);

DO $$
BEGIN
  CREATE INDEX "idempotency_keys_contact_ids_idx" ON "idempotency_keys" USING gin ("tenant_id", "contact_ids");
END
$$;
