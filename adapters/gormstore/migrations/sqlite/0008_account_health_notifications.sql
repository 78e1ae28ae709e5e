-- account health, notifications
--
-- raw_signal is the kept part of the signal as JSON, empty when none.

ALTER TABLE accounts ADD COLUMN last_issue TEXT NOT NULL DEFAULT '';

ALTER TABLE accounts ADD COLUMN raw_signal TEXT NOT NULL DEFAULT '';

ALTER TABLE accounts ADD COLUMN last_checked_at BIGINT NOT NULL DEFAULT 0;

ALTER TABLE accounts ADD COLUMN retry_after BIGINT NOT NULL DEFAULT 0;

CREATE TABLE notifications (
	id          TEXT PRIMARY KEY,
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	kind        TEXT NOT NULL,
	subject_id  TEXT NOT NULL DEFAULT '',
	platform    TEXT NOT NULL DEFAULT '',
	severity    TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT '',
	issue       TEXT NOT NULL DEFAULT '',
	action      TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL DEFAULT '',
	message     TEXT NOT NULL DEFAULT '',
	email       BOOLEAN NOT NULL DEFAULT FALSE,
	created_at  BIGINT NOT NULL,
	read_at     BIGINT NOT NULL DEFAULT 0,
	emailed_at  BIGINT NOT NULL DEFAULT 0,
	lease_until BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX notifications_owner ON notifications(owner_id, created_at);

CREATE INDEX notifications_owed ON notifications(created_at) WHERE email AND emailed_at = 0;
