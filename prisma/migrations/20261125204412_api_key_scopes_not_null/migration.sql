-- A key's scopes are never null: a missing list reads as no scope (403 insufficient_scope), not as an error.
-- Prisma's schema language cannot say NOT NULL of a list; the default it can.
UPDATE "api_keys" SET "scopes" = ARRAY[]::TEXT[] WHERE "scopes" IS NULL;

-- AlterTable
ALTER TABLE "api_keys" ALTER COLUMN "scopes" SET DEFAULT ARRAY[]::TEXT[],
ALTER COLUMN "scopes" SET NOT NULL;
