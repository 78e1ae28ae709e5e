-- match search by owner
--
-- match_search (migration 23) indexed every owner's matches in one set
-- of lists, so a search read every owner's hits for its words: an
-- owner's few flagged matches searched for a word another owner's
-- posts all hold cost that owner's every hit. It is built again with one
-- partition per owner (FTS4's languageid, lid), as recent_words is, so
-- a search reads its owner's lists only.
--
-- An owner's lid is its row in match_search_owners, given when the
-- owner is created and never changed, reused or dropped: a match's
-- terms are taken out of the partition they went into, which FTS4 finds
-- by reading the match's lid when the match goes, after its owner has
-- perhaps gone. FTS4 reads an external content table's rows by a
-- column named rowid, with the partition beside the indexed columns;
-- matches holds no partition, so the content is a view of matches with
-- its owner's lid. The lists still run newest first and keep the
-- match's rowid as docid (search.go).

CREATE TABLE match_search_owners (
	lid      INTEGER PRIMARY KEY,
	owner_id TEXT NOT NULL UNIQUE
);

INSERT INTO match_search_owners (owner_id) SELECT id FROM owners ORDER BY created_at, id;

CREATE TRIGGER owners_search_lid AFTER INSERT ON owners BEGIN
	INSERT OR IGNORE INTO match_search_owners (owner_id) VALUES (new.id);
END;

DROP TRIGGER matches_search_insert;
DROP TRIGGER matches_search_delete;
DROP TRIGGER matches_search_update_old;
DROP TRIGGER matches_search_update_new;
DROP TABLE match_search;

CREATE VIEW match_search_rows AS
	SELECT m.rowid AS rowid, m.title AS title, m.body AS body, m.author AS author, o.lid AS lid
	FROM matches m JOIN match_search_owners o ON o.owner_id = m.owner_id;

CREATE VIRTUAL TABLE match_search USING fts4(content="match_search_rows", title, body, author, languageid="lid", order=DESC, tokenize=unicode61 "remove_diacritics=0");

CREATE TRIGGER matches_search_insert AFTER INSERT ON matches BEGIN
	INSERT INTO match_search (docid, title, body, author, lid)
	VALUES (new.rowid, new.title, new.body, new.author, (SELECT lid FROM match_search_owners WHERE owner_id = new.owner_id));
END;

CREATE TRIGGER matches_search_delete BEFORE DELETE ON matches BEGIN
	DELETE FROM match_search WHERE docid = old.rowid;
END;

CREATE TRIGGER matches_search_update_old BEFORE UPDATE OF title, body, author, owner_id ON matches BEGIN
	DELETE FROM match_search WHERE docid = old.rowid;
END;

CREATE TRIGGER matches_search_update_new AFTER UPDATE OF title, body, author, owner_id ON matches BEGIN
	INSERT INTO match_search (docid, title, body, author, lid)
	VALUES (new.rowid, new.title, new.body, new.author, (SELECT lid FROM match_search_owners WHERE owner_id = new.owner_id));
END;

INSERT INTO match_search (match_search) VALUES ('rebuild');
