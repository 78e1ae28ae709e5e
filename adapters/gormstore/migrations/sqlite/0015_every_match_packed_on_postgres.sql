-- every match packed on Postgres
--
-- Superseded by 19, which drops the column.

