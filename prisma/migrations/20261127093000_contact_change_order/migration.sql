-- A contact's events follow its changes in the feed (issue #30, found by an outside tester). An event's position
-- is its transaction's id, handed out when a transaction first writes, and two transactions can change a contact
-- in the other order: one that took its id first (a batch that had written other rows already) and changed the
-- contact after another, which took a later id, had changed it and committed. Its event then came before the
-- other's in the feed, and a follower kept the older state. Each contact now carries the transaction id of its
-- last change (changed_xid, the node's, as events record it); a change by a transaction whose id is below it is
-- refused as a serialization failure (40001), and rubrica runs that transaction again, with a new id that follows.
-- updated_at also moves by a millisecond at least on each change (answers show milliseconds), so that two states
-- of a contact never show the same updatedAt.

-- On Citus the column goes to every shard at once, and a function may then not be replaced in the same transaction
-- ("a parallel operation on a distributed table"): one shard after another instead. Elsewhere a name no one reads.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

ALTER TABLE "contacts" ADD COLUMN "changed_xid" BIGINT NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION "contacts_before_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  asked TEXT;
  previous TEXT[];
  unknown TEXT[];
  own BIGINT := pg_current_xact_id()::TEXT::BIGINT;
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
    NEW.changed_xid := own;
  ELSIF ROW(NEW.*) IS DISTINCT FROM ROW(OLD.*) THEN
    IF OLD.changed_xid > own THEN
      RAISE EXCEPTION 'contact changed by a later transaction' USING ERRCODE = '40001';
    END IF;
    NEW.email_key := lower(NEW.email);
    NEW.version := OLD.version + 1;
    NEW.updated_at := GREATEST(NEW.updated_at, OLD.updated_at + interval '1 millisecond');
    NEW.changed_xid := own;
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION "contacts_record_erasure"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  number BIGINT;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "tenants" t WHERE t.id = OLD.tenant_id) THEN
    RETURN NULL;
  END IF;
  IF OLD.changed_xid > pg_current_xact_id()::TEXT::BIGINT THEN
    RAISE EXCEPTION 'contact changed by a later transaction' USING ERRCODE = '40001';
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
