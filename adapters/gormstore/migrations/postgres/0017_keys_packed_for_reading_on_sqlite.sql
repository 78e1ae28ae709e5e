-- keys packed for reading on SQLite
--
-- Superseded by 19, which drops the column and its triggers.

