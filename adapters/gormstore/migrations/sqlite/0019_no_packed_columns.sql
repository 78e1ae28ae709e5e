-- no packed columns
--
-- Matches and keys are read as their columns: the packed copies of
-- migrations 11, 16 and 17 and the triggers that kept keys packed go.

DROP TRIGGER api_keys_packed_new;

DROP TRIGGER api_keys_packed;

ALTER TABLE api_keys DROP COLUMN packed;

ALTER TABLE matches DROP COLUMN packed;

ALTER TABLE matches DROP COLUMN packed_score;
