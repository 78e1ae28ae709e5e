-- reddit checkpoints and source health
--
-- One row per community and listing, times in microseconds like every table.

CREATE TABLE reddit_checkpoints (
	community       TEXT NOT NULL,
	listing         TEXT NOT NULL,
	until_us        BIGINT NOT NULL DEFAULT 0,
	rate            DOUBLE PRECISION NOT NULL DEFAULT 0,
	last_via        TEXT NOT NULL DEFAULT '',
	last_read_at    BIGINT NOT NULL DEFAULT 0,
	last_success_at BIGINT NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	last_error_at   BIGINT NOT NULL DEFAULT 0,
	archive_lag_us  BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (community, listing)
);
