-- key changes announced on Postgres
--
-- Postgres announces every change to a key but its last use when the
-- change commits, so that each process can keep keys in memory. The
-- trigger sees every writer: a replica, the admin console, an owner's
-- deletion.

CREATE FUNCTION earshot_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('earshot_keys', OLD.hash);
	RETURN NULL;
END $$;

CREATE TRIGGER api_keys_changed
	AFTER UPDATE OF id, owner_id, kind, name, hash, scopes, created_at, revoked_at OR DELETE ON api_keys
	FOR EACH ROW EXECUTE FUNCTION earshot_key_changed();
