-- used-up rate windows announced on Postgres
--
-- A rate window keeps the limit it is counted against (lim), and Postgres
-- announces a window when its count reaches it, so that each process knows
-- which windows are used up without reading them on every request. Old
-- rows count against no limit (0) and are never announced.

ALTER TABLE rate_windows ADD COLUMN lim BIGINT NOT NULL DEFAULT 0;
