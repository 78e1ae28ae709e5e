-- keys packed for reading on SQLite
--
-- Superseded by 19, which drops the column and its triggers.

ALTER TABLE api_keys ADD COLUMN packed TEXT;

UPDATE api_keys SET packed = concat(octet_length(id), ':', id, octet_length(owner_id), ':', owner_id, octet_length(kind), ':', kind, octet_length(name), ':', name, octet_length(hash), ':', hash, octet_length(scopes), ':', scopes, octet_length(created_at), ':', created_at, octet_length(revoked_at), ':', revoked_at, octet_length(last_used_at), ':', last_used_at);

CREATE TRIGGER api_keys_packed_new AFTER INSERT ON api_keys BEGIN
	UPDATE api_keys SET packed = concat(octet_length(NEW.id), ':', NEW.id, octet_length(NEW.owner_id), ':', NEW.owner_id, octet_length(NEW.kind), ':', NEW.kind, octet_length(NEW.name), ':', NEW.name, octet_length(NEW.hash), ':', NEW.hash, octet_length(NEW.scopes), ':', NEW.scopes, octet_length(NEW.created_at), ':', NEW.created_at, octet_length(NEW.revoked_at), ':', NEW.revoked_at, octet_length(NEW.last_used_at), ':', NEW.last_used_at) WHERE id = NEW.id;
END;

CREATE TRIGGER api_keys_packed AFTER UPDATE OF id, owner_id, kind, name, hash, scopes, created_at, revoked_at, last_used_at ON api_keys BEGIN
	UPDATE api_keys SET packed = concat(octet_length(NEW.id), ':', NEW.id, octet_length(NEW.owner_id), ':', NEW.owner_id, octet_length(NEW.kind), ':', NEW.kind, octet_length(NEW.name), ':', NEW.name, octet_length(NEW.hash), ':', NEW.hash, octet_length(NEW.scopes), ':', NEW.scopes, octet_length(NEW.created_at), ':', NEW.created_at, octet_length(NEW.revoked_at), ':', NEW.revoked_at, octet_length(NEW.last_used_at), ':', NEW.last_used_at) WHERE id = NEW.id;
END;
