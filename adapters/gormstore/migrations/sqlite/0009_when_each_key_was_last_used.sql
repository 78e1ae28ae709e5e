-- when each key was last used

ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
