-- daily counts of scored matches
--
-- One row per owner, UTC day of the match's creation (days since 1970),
-- platform, intent, score band (0 for 0-9, ..., 9 for 90-100) and
-- phrase: how many of the owner's matches were scored with that intent
-- and band. SetScores adds to it in the transaction that stores the
-- scores, so the trends page reads these rows and never the matches.
-- The key's order groups a day's rows by platform, intent and band, the
-- order the trends of all phrases are summed in; the phrase index reads
-- one phrase and serves the cascade of its deletion. Rows older than
-- 100 days are trimmed as scores are stored. The counts start from the
-- matches scored in the last 100 days.

CREATE TABLE match_day_counts (
	owner_id  TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	day       BIGINT NOT NULL,
	platform  TEXT NOT NULL,
	intent    TEXT NOT NULL,
	band      INTEGER NOT NULL,
	phrase_id TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	n         BIGINT NOT NULL,
	PRIMARY KEY (owner_id, day, platform, intent, band, phrase_id)
);

CREATE INDEX match_day_counts_phrase ON match_day_counts(phrase_id, day);

INSERT INTO match_day_counts (owner_id, day, platform, intent, band, phrase_id, n)
SELECT owner_id, created_us / 86400000000, platform, COALESCE(intent, ''),
	CASE WHEN score >= 90 THEN 9 WHEN score < 0 THEN 0 ELSE score / 10 END, phrase_id, COUNT(*)
FROM matches
WHERE score IS NOT NULL AND created_us >= (CAST(FLOOR(EXTRACT(EPOCH FROM now())) AS BIGINT) / 86400 - 100) * 86400000000
GROUP BY 1, 2, 3, 4, 5, 6;
