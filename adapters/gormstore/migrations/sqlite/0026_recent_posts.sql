-- recent posts
--
-- recent_posts is each owner's window of recent posts: every post the
-- owner's readers saw, matched or not, with its text, kept for a
-- bounded time and number and trimmed oldest first, in the order posts
-- were kept (id; AUTOINCREMENT never uses an id twice). Ingest writes
-- the row alone and its one index: lid is a number for the owner, a
-- smaller key than the owner's id. post holds the post's own fields
-- (external id, author, title, text, url, likes, comments, posted time)
-- as one JSON object, as the batch carries it: the columns are what a
-- read selects by, and a field a column each cost ingest as much again.
--
-- recent_words is the full-text index of the posts' words, as the
-- matcher cuts them (match.AppendWords), one partition per owner
-- (FTS4's languageid, lid), so a search reads one owner's lists only.
-- FTS4 ships in the SQLite driver's default build (FTS5 needs a build
-- tag). The simple tokenizer splits words at ASCII punctuation and
-- space and folds nothing beyond ASCII: the words arrive folded by the
-- matcher's rule. Posts join it a batch at a time after they are kept
-- (recent.go, IndexRecent); recent_index.last_id is the last one
-- indexed, and the posts past it are read directly by a search. A post
-- leaves the index before its row goes (the trigger).
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
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id  TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	lid       INTEGER NOT NULL,
	platform  TEXT NOT NULL,
	community TEXT NOT NULL DEFAULT '',
	seen_at   BIGINT NOT NULL,
	post      TEXT NOT NULL
);

CREATE INDEX recent_posts_owner ON recent_posts(lid);

CREATE VIRTUAL TABLE recent_words USING fts4(words, languageid="lid", order=DESC, tokenize=simple);

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
