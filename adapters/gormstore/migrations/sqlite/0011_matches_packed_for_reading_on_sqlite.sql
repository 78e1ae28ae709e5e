-- matches packed for reading on SQLite
--
-- Superseded by 19, which drops the column.

ALTER TABLE matches ADD COLUMN packed TEXT;

UPDATE matches SET packed = concat(octet_length(id), ':', id, octet_length(owner_id), ':', owner_id, octet_length(phrase_id), ':', phrase_id, octet_length(phrase), ':', phrase, octet_length(platform), ':', platform, octet_length(created_us), ':', created_us, octet_length(external_id), ':', external_id, octet_length(author), ':', author, COALESCE(octet_length(title) || ':' || title, '-'), octet_length(body), ':', body, octet_length(url), ':', url, octet_length(likes), ':', likes, octet_length(comments), ':', comments, octet_length(posted_at), ':', posted_at);
