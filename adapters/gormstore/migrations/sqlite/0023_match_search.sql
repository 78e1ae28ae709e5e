-- match search
--
-- A full-text index of each match's title, text and author: the q of
-- GET /matches and the inbox's search (search.go). It is FTS4, which
-- the SQLite driver compiles in by default (its FTS5 needs a build tag
-- every build would have to carry). The index keeps no copy of the
-- text: it reads matches by rowid ("external content"), and the
-- triggers keep it in step with them. Its lists run newest first
-- (order=DESC), as a search page walks them. The tokenizer keeps
-- accents, as Postgres's 'simple' configuration does. A later step that
-- rebuilds matches must keep each owner's rowids in created_us order
-- (search.go) and end with
-- INSERT INTO match_search (match_search) VALUES ('rebuild').

CREATE VIRTUAL TABLE match_search USING fts4(content="matches", title, body, author, order=DESC, tokenize=unicode61 "remove_diacritics=0");

CREATE TRIGGER matches_search_insert AFTER INSERT ON matches BEGIN
	INSERT INTO match_search (docid, title, body, author) VALUES (new.rowid, new.title, new.body, new.author);
END;

CREATE TRIGGER matches_search_delete BEFORE DELETE ON matches BEGIN
	DELETE FROM match_search WHERE docid = old.rowid;
END;

CREATE TRIGGER matches_search_update_old BEFORE UPDATE OF title, body, author ON matches BEGIN
	DELETE FROM match_search WHERE docid = old.rowid;
END;

CREATE TRIGGER matches_search_update_new AFTER UPDATE OF title, body, author ON matches BEGIN
	INSERT INTO match_search (docid, title, body, author) VALUES (new.rowid, new.title, new.body, new.author);
END;

INSERT INTO match_search (match_search) VALUES ('rebuild');
