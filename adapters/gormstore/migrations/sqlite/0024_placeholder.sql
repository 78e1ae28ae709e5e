-- placeholder
--
-- Holds this number for a step of another branch not merged yet;
-- dropped when merging.

SELECT 1;
