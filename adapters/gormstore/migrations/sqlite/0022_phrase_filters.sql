-- phrase filters
--
-- filters holds a phrase's filters (words to exclude and require,
-- authors and communities to skip, minimum likes and comments, title
-- only) as a JSON object; '' for a phrase without filters, which every
-- phrase created before has.

ALTER TABLE phrases ADD COLUMN filters TEXT NOT NULL DEFAULT '';
