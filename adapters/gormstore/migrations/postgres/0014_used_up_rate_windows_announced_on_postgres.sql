-- used-up rate windows announced on Postgres
--
-- A rate window keeps the limit it is counted against (lim), and Postgres
-- announces a window when its count reaches it, so that each process knows
-- which windows are used up without reading them on every request. Old
-- rows count against no limit (0) and are never announced.

ALTER TABLE rate_windows ADD COLUMN lim BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION earshot_window_used() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('earshot_windows', NEW.started || ' ' || NEW.key);
	RETURN NULL;
END $$;

CREATE TRIGGER rate_windows_used_new AFTER INSERT ON rate_windows
	FOR EACH ROW WHEN (NEW.lim > 0 AND NEW.count >= NEW.lim) EXECUTE FUNCTION earshot_window_used();

CREATE TRIGGER rate_windows_used AFTER UPDATE ON rate_windows
	FOR EACH ROW WHEN (NEW.lim > 0 AND NEW.count >= NEW.lim AND (OLD.count < NEW.lim OR OLD.started <> NEW.started))
	EXECUTE FUNCTION earshot_window_used();
