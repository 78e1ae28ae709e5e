-- matches narrow and roomy
--
-- A match is written three times: stored, leased by the scorer, scored.
-- Each update of a Postgres row writes a new version of it, and in 23 the
-- stored search_doc (as wide as the rest of the row) was computed again
-- for every version and doubled the pages a page of the API reads. The
-- search index is now over the expression, computed when a version needs
-- new index entries, and read nowhere else. A fill factor of 70 leaves
-- room on each page for the scorer's lease: an update of a column no
-- index holds then stays on its page (a heap-only tuple) and adds no
-- index entries for the reads to pass over. Rows stored before keep
-- their pages until they are written again.

DROP INDEX matches_search;

ALTER TABLE matches DROP COLUMN search_doc;

CREATE INDEX matches_search ON matches USING gin (
	to_tsvector('simple', translate(coalesce(title, '') || ' ' || body || ' ' || author, '.-/@:<>&', '        '))
);

ALTER TABLE matches SET (fillfactor = 70);
