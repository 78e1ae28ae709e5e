-- recent posts
--
-- recent_posts is each owner's window of recent posts: every post the
-- owner's readers saw, matched or not, with its text, kept for a
-- bounded time and number and trimmed oldest first, in the order posts
-- were kept (id). Ingest writes the row and its two small indexes. post
-- holds the post's own fields (external id, author, title, text, url,
-- likes, comments, posted time) as one JSON object, as the batch carries
-- it: the columns are what a read selects by.
--
-- words is the text search document of the post's words, as the
-- matcher cuts them (match.AppendWords), made a batch at a time after
-- the post is kept (recent.go, IndexRecent), and NULL until then:
-- recent_posts_unindexed lists the posts waiting, which a search reads
-- directly. The 'simple' configuration keeps every word as it comes,
-- folded already by the matcher's rule.
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
	id        BIGSERIAL PRIMARY KEY,
	owner_id  TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform  TEXT NOT NULL,
	community TEXT NOT NULL DEFAULT '',
	seen_at   BIGINT NOT NULL,
	post      TEXT NOT NULL,
	words     tsvector
);

CREATE INDEX recent_posts_owner ON recent_posts(owner_id, id);

CREATE INDEX recent_posts_unindexed ON recent_posts(id) WHERE words IS NULL;

CREATE INDEX recent_posts_words ON recent_posts USING gin (words);

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
