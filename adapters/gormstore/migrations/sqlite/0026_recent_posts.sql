-- recent posts
--
-- recent_posts is each owner's window of recent posts: every post the
-- owner's readers saw, matched or not, with its text, kept for a
-- bounded time and number (recent.go trims it: by seen_at for the time,
-- by id, the order posts were kept in, for an owner's number). words holds the title's and the text's
-- words as the matcher cuts them (match.AppendWords); recent_words, a
-- full-text index, reads them from here by rowid ("external content")
-- and keeps no copy. lid puts each owner's posts in a partition of the
-- index of their own (FTS4's languageid), so a search reads one
-- owner's lists only. FTS4 ships in the SQLite driver's default build
-- (its FTS5 needs a build tag). The simple tokenizer splits words at
-- ASCII punctuation and space and folds nothing beyond ASCII: words
-- arrive folded already, by the matcher's rule.
--
-- Posts are indexed after they are kept, a batch at a time
-- (IndexRecent), so ingest pays for the row alone. recent_index.last_id
-- is the last post indexed; AUTOINCREMENT keeps ids from being used
-- twice, so every post past it waits to be indexed. A post leaves the
-- index before its row goes (the trigger: the index reads the row's
-- words to remove them).
--
-- recent_backfills are the phrases waiting to be filled from their
-- owner's window. matches.backfilled marks a match found there.
--
-- filter_archives is, for each phrase, the last set of its matches
-- that applying its filters archived, and filter_archive_matches its
-- members, so the step can be undone exactly.
--
-- matches_phrase_created lists a phrase's matches newest first.

CREATE TABLE recent_posts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform    TEXT NOT NULL,
	external_id TEXT NOT NULL,
	community   TEXT NOT NULL DEFAULT '',
	author      TEXT NOT NULL DEFAULT '',
	title       TEXT,
	body        TEXT NOT NULL DEFAULT '',
	url         TEXT NOT NULL DEFAULT '',
	likes       BIGINT NOT NULL DEFAULT 0,
	comments    BIGINT NOT NULL DEFAULT 0,
	posted_at   BIGINT NOT NULL DEFAULT 0,
	seen_at     BIGINT NOT NULL,
	lid         INTEGER NOT NULL,
	words       TEXT NOT NULL DEFAULT ''
);

CREATE INDEX recent_posts_owner ON recent_posts(owner_id);

CREATE INDEX recent_posts_seen ON recent_posts(seen_at);

CREATE VIRTUAL TABLE recent_words USING fts4(content="recent_posts", words, languageid="lid", order=DESC, tokenize=simple);

CREATE TABLE recent_index (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	last_id BIGINT NOT NULL
);

INSERT INTO recent_index (id, last_id) VALUES (1, 0);

CREATE TRIGGER recent_posts_unindex BEFORE DELETE ON recent_posts
WHEN old.id <= (SELECT last_id FROM recent_index) BEGIN
	DELETE FROM recent_words WHERE docid = old.id;
END;

CREATE TABLE recent_backfills (
	phrase_id    TEXT PRIMARY KEY REFERENCES phrases(id) ON DELETE CASCADE,
	requested_at BIGINT NOT NULL
);

CREATE INDEX recent_backfills_requested ON recent_backfills(requested_at);

ALTER TABLE matches ADD COLUMN backfilled INTEGER NOT NULL DEFAULT 0;

CREATE TABLE filter_archives (
	id         TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	phrase_id  TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	matches    BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);

CREATE INDEX filter_archives_phrase ON filter_archives(phrase_id);

CREATE TABLE filter_archive_matches (
	archive_id TEXT NOT NULL REFERENCES filter_archives(id) ON DELETE CASCADE,
	match_id   TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
	PRIMARY KEY (archive_id, match_id)
);

CREATE INDEX filter_archive_matches_match ON filter_archive_matches(match_id);

CREATE INDEX matches_phrase_created ON matches(phrase_id, created_us);
