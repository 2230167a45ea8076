-- The batch import records what the contacts' per-row triggers would, set-based in its own statements: the new
-- contacts' instants and email keys, the tag links and the events of the contacts it creates and updates (issue
-- #30; docs/performance.md, "Batch import beside COPY without triggers"). A transaction that sets
-- rubrica.batch_writes to 'on' (SET LOCAL, which Citus sends to the workers, where the triggers run, when
-- citus.propagate_set_commands is 'local') tells the triggers that its statements do that work themselves: they
-- skip its rows in their WHEN clause, without a call. Every other writer (the API's single writes, the admin CLI,
-- SQL by hand) leaves it unset and gets the triggers as before. The BEFORE UPDATE trigger still runs for every row
-- (a contact's version, its tags ordered and checked); the DELETE trigger (erasure) is not the batch's.

-- The transaction id of the node that runs the statement, as events record it. A function of a column in PL/pgSQL
-- (never inlined), so that Citus runs it on the worker with the row, as the triggers do, rather than once on the
-- coordinator (whose transaction id means nothing to the worker's feed); the argument is otherwise unused.
CREATE FUNCTION "node_xact_id"(UUID) RETURNS BIGINT LANGUAGE plpgsql STABLE PARALLEL SAFE
  AS $$ BEGIN RETURN pg_current_xact_id()::TEXT::BIGINT; END $$;

-- In a DO block: on Citus the triggers are dropped and created on every shard of contacts from the text of one
-- command.
DO $$
BEGIN
  DROP TRIGGER "contacts_before_insert" ON "contacts";
  CREATE TRIGGER "contacts_before_insert" BEFORE INSERT ON "contacts"
    FOR EACH ROW WHEN (current_setting('rubrica.batch_writes', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "contacts_before_write"();
  DROP TRIGGER "contacts_after_insert_tags" ON "contacts";
  CREATE TRIGGER "contacts_after_insert_tags" AFTER INSERT ON "contacts"
    FOR EACH ROW WHEN (cardinality(NEW.tags) > 0
      AND current_setting('rubrica.batch_writes', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "contacts_link_tags"();
  DROP TRIGGER "contacts_after_update_tags" ON "contacts";
  CREATE TRIGGER "contacts_after_update_tags" AFTER UPDATE OF "tags" ON "contacts"
    FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags
      AND current_setting('rubrica.batch_writes', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "contacts_link_tags"();
  DROP TRIGGER "contacts_after_insert_event" ON "contacts";
  CREATE TRIGGER "contacts_after_insert_event" AFTER INSERT ON "contacts"
    FOR EACH ROW WHEN (current_setting('rubrica.batch_writes', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "contacts_record_event"();
  DROP TRIGGER "contacts_after_update_event" ON "contacts";
  CREATE TRIGGER "contacts_after_update_event" AFTER UPDATE ON "contacts"
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*
      AND current_setting('rubrica.batch_writes', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "contacts_record_event"();
END
$$;
