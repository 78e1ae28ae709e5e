-- owners' pending changes of address

CREATE TABLE email_changes (
	hash       TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	email      TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX email_changes_owner ON email_changes(owner_id, expires_at);
