-- matches narrow and roomy
--
-- Postgres only: SQLite updates a row in place and keeps its search
-- index in match_search (23).

SELECT 1;
