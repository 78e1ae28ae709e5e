-- matches roomy
--
-- A match is written three times: stored, leased by the scorer, scored.
-- Each update of a Postgres row writes a new version of it; on a full
-- page the version goes to another page with new entries in every index
-- of matches, which the API's pages then walk past at every depth until
-- a vacuum. A fill factor of 70 leaves room on each page for the lease:
-- an update of columns no index holds stays on its page (a heap-only
-- tuple) and adds no index entries. Pages written before keep no room
-- until they are written again.

ALTER TABLE matches SET (fillfactor = 70);
