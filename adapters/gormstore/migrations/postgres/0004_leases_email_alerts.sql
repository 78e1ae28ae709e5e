-- leases, email alerts

CREATE TABLE leases (
	name   TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	until  BIGINT NOT NULL
);

ALTER TABLE matches ADD COLUMN emailed_at BIGINT NOT NULL DEFAULT 0;

CREATE INDEX matches_alerts ON matches(owner_id, score) WHERE emailed_at = 0 AND score IS NOT NULL;
