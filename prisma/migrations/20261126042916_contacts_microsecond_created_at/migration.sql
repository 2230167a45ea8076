-- AlterTable
ALTER TABLE "contacts" ALTER COLUMN "acquired_at" SET DATA TYPE TIMESTAMPTZ(6),
ALTER COLUMN "created_at" SET DATA TYPE TIMESTAMPTZ(6),
ALTER COLUMN "updated_at" SET DATA TYPE TIMESTAMPTZ(6);

-- Prisma cannot express triggers (see the first migration). createdAt stays unique per tenant, now to the
-- microsecond: a batch import creates thousands of contacts a second, and moving each colliding one on by a
-- millisecond would push a tenant's createdAt seconds into the future; to the microsecond it stays within
-- milliseconds of the clock. An insert may leave acquired_at NULL to have it follow created_at (the batch import
-- takes created_at from clock_timestamp(), so that the rows of one statement rarely collide at all).
CREATE OR REPLACE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  requested TIMESTAMPTZ(6);
BEGIN
  NEW.email_key := lower(NEW.email);
  IF TG_OP = 'INSERT' THEN
    requested := NEW.created_at;
    PERFORM pg_advisory_xact_lock(hashtextextended('rubrica.contacts.created_at:' || NEW.tenant_id::text, 0));
    -- A taken instant moves past the latest taken one within the next second: one index probe, where stepping a
    -- microsecond at a time would make a bulk insert (COPY, createMany: every row at the same now()) quadratic.
    WHILE EXISTS (SELECT 1 FROM "contacts" WHERE tenant_id = NEW.tenant_id AND created_at = NEW.created_at) LOOP
      NEW.created_at := (SELECT max(created_at) FROM "contacts" WHERE tenant_id = NEW.tenant_id
        AND created_at >= NEW.created_at AND created_at < NEW.created_at + interval '1 second')
        + interval '1 microsecond';
    END LOOP;
    -- acquired_at defaults to the creation instant: follow created_at when it had to move.
    IF NEW.acquired_at IS NULL OR NEW.acquired_at = requested THEN
      NEW.acquired_at := NEW.created_at;
    END IF;
    NEW.updated_at := GREATEST(NEW.updated_at, NEW.created_at);
  END IF;
  RETURN NEW;
END
$$;
