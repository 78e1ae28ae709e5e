-- placeholder 0022
--
-- Holds the number for a step made on another line of work.

SELECT 1;
