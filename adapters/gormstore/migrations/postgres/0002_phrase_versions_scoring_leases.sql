-- phrase versions, scoring leases

ALTER TABLE owners ADD COLUMN phrase_version BIGINT NOT NULL DEFAULT 0;

ALTER TABLE matches ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;

CREATE INDEX matches_unscored ON matches(created_us) WHERE score IS NULL;

CREATE UNIQUE INDEX accounts_owner_platform_id ON accounts(owner_id, platform, id);
