-- dashboard sign-in links, sessions, triage

CREATE TABLE login_links (
	hash       TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX login_links_owner ON login_links(owner_id, expires_at);

CREATE TABLE dashboard_sessions (
	id           TEXT PRIMARY KEY,
	hash         TEXT NOT NULL UNIQUE,
	owner_id     TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL
);

CREATE INDEX dashboard_sessions_owner ON dashboard_sessions(owner_id);

CREATE INDEX dashboard_sessions_seen ON dashboard_sessions(last_seen_at);

CREATE TABLE match_triage (
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	match_id   TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
	created_us BIGINT NOT NULL,
	is_read    INTEGER NOT NULL DEFAULT 0,
	starred    INTEGER NOT NULL DEFAULT 0,
	archived   INTEGER NOT NULL DEFAULT 0,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, match_id)
);

CREATE INDEX match_triage_match ON match_triage(match_id);

CREATE INDEX match_triage_created ON match_triage(owner_id, created_us);

CREATE INDEX match_triage_read ON match_triage(owner_id, is_read, created_us);

CREATE INDEX match_triage_starred ON match_triage(owner_id, starred, created_us);

CREATE INDEX match_triage_archived ON match_triage(owner_id, archived, created_us);

CREATE INDEX matches_owner_scored ON matches(owner_id, scored_at);
