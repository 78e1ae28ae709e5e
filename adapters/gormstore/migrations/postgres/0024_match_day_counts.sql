-- daily counts of scored matches
--
-- One row per owner, UTC day of the match's creation (days since 1970),
-- platform, intent and phrase, with how many of those matches were
-- scored in each score band: band0 counts scores 0-9, band1 10-19, ...,
-- band9 90-100. The bands are columns, not a key, because there are
-- always ten: the trends of 90 days then read a tenth of the rows.
-- SetScores adds to it in the transaction that stores the scores, so
-- the trends page reads these rows and never the matches. The key's
-- order groups a day's rows by platform and intent, the order the
-- trends of all phrases are summed in; the phrase index reads one
-- phrase and serves the cascade of its deletion. Rows older than 100
-- days are trimmed as scores are stored. The counts start from the
-- matches scored in the last 100 days.

CREATE TABLE match_day_counts (
	owner_id  TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	day       BIGINT NOT NULL,
	platform  TEXT NOT NULL,
	intent    TEXT NOT NULL,
	phrase_id TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	band0 BIGINT NOT NULL DEFAULT 0,
	band1 BIGINT NOT NULL DEFAULT 0,
	band2 BIGINT NOT NULL DEFAULT 0,
	band3 BIGINT NOT NULL DEFAULT 0,
	band4 BIGINT NOT NULL DEFAULT 0,
	band5 BIGINT NOT NULL DEFAULT 0,
	band6 BIGINT NOT NULL DEFAULT 0,
	band7 BIGINT NOT NULL DEFAULT 0,
	band8 BIGINT NOT NULL DEFAULT 0,
	band9 BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (owner_id, day, platform, intent, phrase_id)
);

CREATE INDEX match_day_counts_phrase ON match_day_counts(phrase_id, day);

INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, band0, band1, band2, band3, band4, band5, band6, band7, band8, band9)
SELECT owner_id, day, platform, intent, phrase_id,
	SUM(CASE WHEN band = 0 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 1 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 2 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 3 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 4 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 5 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 6 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 7 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 8 THEN 1 ELSE 0 END),
	SUM(CASE WHEN band = 9 THEN 1 ELSE 0 END)
FROM (
	SELECT owner_id, created_us / 86400000000 AS day, platform, COALESCE(intent, '') AS intent, phrase_id,
		CASE WHEN score >= 90 THEN 9 WHEN score < 0 THEN 0 ELSE score / 10 END AS band
	FROM matches
	WHERE score IS NOT NULL AND created_us >= (CAST(FLOOR(EXTRACT(EPOCH FROM now())) AS BIGINT) / 86400 - 100) * 86400000000
) AS scored
GROUP BY owner_id, day, platform, intent, phrase_id;
