-- match search by owner
--
-- SQLite only: there the text index is built again with a partition
-- per owner. On Postgres a search is a condition on the owner's rows.

SELECT 1;
