-- deliveries roomy
--
-- Postgres only: SQLite updates a row in place.

SELECT 1;
