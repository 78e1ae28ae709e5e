-- placeholder for a step of another branch
--
-- Holds number 22 so that the steps stay contiguous; it is replaced
-- by that branch's 0022 when the branches meet.

SELECT 1;
