-- webhooks, deliveries

CREATE TABLE webhooks (
	id                   TEXT PRIMARY KEY,
	owner_id             TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	url                  TEXT NOT NULL,
	min_score            INTEGER NOT NULL,
	platforms            TEXT NOT NULL DEFAULT '',
	active               BOOLEAN NOT NULL,
	disabled_reason      TEXT NOT NULL DEFAULT '',
	consecutive_failures INTEGER NOT NULL DEFAULT 0,
	secret               BYTEA NOT NULL,
	created_at           BIGINT NOT NULL
);

CREATE UNIQUE INDEX webhooks_owner_url ON webhooks(owner_id, url);

CREATE TABLE webhook_deliveries (
	id              TEXT PRIMARY KEY,
	webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	owner_id        TEXT NOT NULL,
	match_id        TEXT NOT NULL DEFAULT '',
	event           TEXT NOT NULL,
	trigger_kind    TEXT NOT NULL,
	status          TEXT NOT NULL,
	tries           INTEGER NOT NULL DEFAULT 0,
	response_status INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	payload         BYTEA,
	created_at      BIGINT NOT NULL,
	last_attempt_at BIGINT NOT NULL DEFAULT 0,
	next_attempt_at BIGINT NOT NULL DEFAULT 0,
	lease_until     BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX webhook_deliveries_log ON webhook_deliveries(webhook_id, created_at);

CREATE INDEX webhook_deliveries_status ON webhook_deliveries(webhook_id, status);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'queued';
