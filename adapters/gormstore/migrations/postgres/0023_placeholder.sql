-- placeholder
--
-- Holds the number of a step on a branch not merged yet; replaced by it when merging.

SELECT 1;
