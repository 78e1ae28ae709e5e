-- match search
--
-- A text search document of each match's title, text and author, with a
-- GIN index: the q of GET /matches and the inbox's search (search.go).
-- The 'simple' configuration folds case and keeps every word (no
-- stemming, no stop words), as SQLite's unicode61 tokenizer does. The
-- parser would read acme.com, acme-crm or <b> as words of their own;
-- those characters become spaces first, so the words are the letters
-- and numbers between them on both databases. The column is stored, so
-- a phrase's recheck reads it instead of parsing the post again; adding
-- it fills it for every existing match.

ALTER TABLE matches ADD COLUMN search_doc tsvector GENERATED ALWAYS AS (
	to_tsvector('simple', translate(coalesce(title, '') || ' ' || body || ' ' || author, '.-/@:<>&', '        '))
) STORED;

CREATE INDEX matches_search ON matches USING gin (search_doc);
