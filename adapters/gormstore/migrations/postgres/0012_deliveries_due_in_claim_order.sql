-- deliveries due in claim order
--
-- A claim reads the due deliveries in (next_attempt_at, id) order; in the
-- claim's own order Postgres walks the index and stops at the limit,
-- instead of sorting the partial index's entries for deliveries no longer
-- queued.

DROP INDEX webhook_deliveries_due;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'queued';
