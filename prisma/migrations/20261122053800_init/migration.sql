-- CreateEnum
CREATE TYPE "tenant_status" AS ENUM ('active', 'suspended', 'closed');

-- CreateEnum
CREATE TYPE "role" AS ENUM ('admin', 'editor', 'viewer');

-- CreateEnum
CREATE TYPE "email_status" AS ENUM ('active', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'pending_review');

-- CreateEnum
CREATE TYPE "stage" AS ENUM ('lead', 'prospect', 'customer', 'ex_customer');

-- CreateTable
CREATE TABLE "tenants" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "status" "tenant_status" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "key_hash" CHAR(64) NOT NULL,
    "hint" TEXT NOT NULL,
    "scopes" TEXT[],
    "role" "role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tags" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tags_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contacts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "email" TEXT,
    "email_key" TEXT,
    "first_name" TEXT,
    "last_name" TEXT,
    "phone" TEXT,
    "email_status" "email_status" NOT NULL DEFAULT 'active',
    "stage" "stage" NOT NULL DEFAULT 'lead',
    "source" TEXT NOT NULL DEFAULT 'manual',
    "consent_type" TEXT NOT NULL DEFAULT 'unknown',
    "archived_at" TIMESTAMPTZ(3),
    "acquired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contact_tags" (
    "contact_id" UUID NOT NULL,
    "tag_id" UUID NOT NULL,

    CONSTRAINT "contact_tags_pkey" PRIMARY KEY ("contact_id","tag_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "tags_tenant_id_name_key" ON "tags"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "contacts_tenant_id_email_status_created_at_idx" ON "contacts"("tenant_id", "email_status", "created_at" DESC);

-- CreateIndex
CREATE INDEX "contacts_tenant_id_stage_created_at_idx" ON "contacts"("tenant_id", "stage", "created_at" DESC);

-- CreateIndex
CREATE INDEX "contacts_tenant_id_email_status_stage_created_at_idx" ON "contacts"("tenant_id", "email_status", "stage", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "contacts_tenant_id_email_key_key" ON "contacts"("tenant_id", "email_key");

-- CreateIndex
CREATE UNIQUE INDEX "contacts_tenant_id_created_at_key" ON "contacts"("tenant_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "contact_tags_tag_id_idx" ON "contact_tags"("tag_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tags" ADD CONSTRAINT "tags_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_tags" ADD CONSTRAINT "contact_tags_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_tags" ADD CONSTRAINT "contact_tags_tag_id_fkey" FOREIGN KEY ("tag_id") REFERENCES "tags"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Prisma cannot express triggers; its schema diff ignores them, so they live only here.
-- contacts.created_at is the list cursor, so it must be unique per tenant at the millisecond precision the
-- cursor carries: an insert whose millisecond is taken moves to the next free one. A per-tenant advisory lock
-- keeps two concurrent transactions from choosing the same free millisecond. email_key is the lower-cased
-- email that the per-tenant unique index compares, so Ann@x.io and ann@x.io are the same contact.
CREATE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  requested TIMESTAMPTZ(3);
BEGIN
  NEW.email_key := lower(NEW.email);
  IF TG_OP = 'INSERT' THEN
    requested := NEW.created_at;
    PERFORM pg_advisory_xact_lock(hashtextextended('rubrica.contacts.created_at:' || NEW.tenant_id::text, 0));
    WHILE EXISTS (SELECT 1 FROM "contacts" WHERE tenant_id = NEW.tenant_id AND created_at = NEW.created_at) LOOP
      NEW.created_at := NEW.created_at + interval '1 millisecond';
    END LOOP;
    -- acquired_at defaults to the creation instant: follow created_at when it had to move.
    IF NEW.acquired_at = requested THEN
      NEW.acquired_at := NEW.created_at;
    END IF;
    NEW.updated_at := GREATEST(NEW.updated_at, NEW.created_at);
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "contacts_before_insert" BEFORE INSERT ON "contacts"
  FOR EACH ROW EXECUTE FUNCTION "contacts_before_write"();
CREATE TRIGGER "contacts_before_update_email" BEFORE UPDATE OF "email" ON "contacts"
  FOR EACH ROW EXECUTE FUNCTION "contacts_before_write"();
