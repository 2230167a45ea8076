-- An event's clock to the microsecond, as clock_timestamp() gives it. The feed numbers a tenant's committed
-- transactions in the order of their last event's clock (src/events/sql.ts, SEQUENCE_SQL): a transaction that
-- changed a contact after another committed its change of it wrote its events later. Kept to the millisecond, two
-- such transactions a fraction of a millisecond apart tied, and the tie went to their random txn: a contact's
-- events could come out of the feed in another order than its changes. A longer precision of the same type: no
-- table rewrite; the events already written keep their milliseconds. The API shows milliseconds, as before.
DO $$
BEGIN
  ALTER TABLE "events" ALTER COLUMN "occurred_at" SET DATA TYPE TIMESTAMPTZ(6);
END
$$;
