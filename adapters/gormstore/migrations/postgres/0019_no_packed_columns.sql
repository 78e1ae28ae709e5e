-- no packed columns
--
-- Matches are read as their columns: the packed copies of migrations 11,
-- 15 and 16 go, with the check that tied packed_score to score.

ALTER TABLE matches DROP CONSTRAINT matches_packed_score;

ALTER TABLE matches DROP COLUMN packed_score;

ALTER TABLE matches DROP COLUMN packed;
