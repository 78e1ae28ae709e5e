-- deliveries roomy
--
-- A delivery row is written at least three times: queued, leased by a
-- claim, recorded. The lease changes no indexed column, so on a page
-- with room its new version stays there (a heap-only tuple) and adds no
-- entry to any of the table's five indexes; on a full page it goes to
-- another with an entry in each. A fill factor of 70 leaves that room.
-- The record changes the status, which is indexed, so it is never
-- heap-only. Pages written before keep no room until they are written
-- again.

ALTER TABLE webhook_deliveries SET (fillfactor = 70);
