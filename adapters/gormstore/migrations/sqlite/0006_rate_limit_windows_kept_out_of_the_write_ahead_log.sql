-- rate limit windows kept out of the write-ahead log
--
-- Every API request updates its window, and a durable commit each time
-- made Postgres wait for a WAL flush per request. The counts only matter
-- for a minute: losing them in a crash is harmless.

DROP TABLE rate_windows;

CREATE  TABLE rate_windows (
	key     TEXT PRIMARY KEY,
	started BIGINT NOT NULL,
	count   BIGINT NOT NULL
);
