-- matches packed for reading on SQLite
--
-- Superseded by 19, which drops the column.

ALTER TABLE matches ADD COLUMN packed TEXT;
