-- shared rate limit windows

CREATE TABLE rate_windows (
	key     TEXT PRIMARY KEY,
	started BIGINT NOT NULL,
	count   BIGINT NOT NULL
);
