-- scores packed for reading
--
-- Superseded by 19, which drops the column and its check.

ALTER TABLE matches ADD COLUMN packed_score TEXT NOT NULL DEFAULT '---';

UPDATE matches SET packed_score = concat(COALESCE(octet_length(score::text) || ':' || score, '-'), COALESCE(octet_length(intent) || ':' || intent, '-'), COALESCE(octet_length(reason) || ':' || reason, '-')) WHERE score IS NOT NULL;

ALTER TABLE matches ADD CONSTRAINT matches_packed_score CHECK ((score IS NULL) = (packed_score = '---'));
