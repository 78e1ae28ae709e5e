-- owners, keys, phrases, posts, matches

CREATE TABLE owners (
	id            TEXT PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL DEFAULT '',
	last_match_us BIGINT NOT NULL DEFAULT 0,
	created_at    BIGINT NOT NULL
);

CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	kind       TEXT NOT NULL,
	name       TEXT NOT NULL DEFAULT '',
	hash       TEXT NOT NULL UNIQUE,
	scopes     TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX api_keys_owner ON api_keys(owner_id, kind);

CREATE TABLE phrases (
	id              TEXT PRIMARY KEY,
	owner_id        TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	phrase          TEXT NOT NULL,
	fold            TEXT NOT NULL,
	platform        TEXT NOT NULL,
	community       TEXT NOT NULL DEFAULT '',
	status          TEXT NOT NULL,
	matches         BIGINT NOT NULL DEFAULT 0,
	last_checked_at BIGINT NOT NULL,
	last_source     TEXT NOT NULL,
	created_at      BIGINT NOT NULL
);

CREATE UNIQUE INDEX phrases_unique ON phrases(owner_id, platform, community, fold);

CREATE INDEX phrases_listening ON phrases(platform, status, community);

CREATE TABLE idempotency_keys (
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	phrase_id  TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, key)
);

CREATE TABLE posts (
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform    TEXT NOT NULL,
	external_id TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	PRIMARY KEY (owner_id, platform, external_id)
);

CREATE TABLE matches (
	id          TEXT PRIMARY KEY,
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	phrase_id   TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	phrase      TEXT NOT NULL,
	platform    TEXT NOT NULL,
	created_us  BIGINT NOT NULL,
	score       INTEGER,
	intent      TEXT,
	reason      TEXT,
	scored_at   BIGINT NOT NULL DEFAULT 0,
	external_id TEXT NOT NULL,
	author      TEXT NOT NULL DEFAULT '',
	title       TEXT,
	body        TEXT NOT NULL DEFAULT '',
	url         TEXT NOT NULL DEFAULT '',
	likes       BIGINT NOT NULL DEFAULT 0,
	comments    BIGINT NOT NULL DEFAULT 0,
	posted_at   BIGINT NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX matches_owner_created ON matches(owner_id, created_us);

CREATE INDEX matches_owner_platform_created ON matches(owner_id, platform, created_us);

CREATE UNIQUE INDEX matches_post ON matches(owner_id, phrase_id, platform, external_id);

CREATE INDEX matches_phrase ON matches(phrase_id);

CREATE TABLE accounts (
	id         TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform   TEXT NOT NULL,
	label      TEXT NOT NULL DEFAULT '',
	session    BYTEA,
	created_at BIGINT NOT NULL
);

CREATE INDEX accounts_owner ON accounts(owner_id, platform);
