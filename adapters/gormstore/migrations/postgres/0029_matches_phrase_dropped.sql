-- matches phrase dropped
--
-- matches_phrase_created (migration 26) begins with phrase_id, so it
-- serves every read matches_phrase served: a phrase's cascade, the
-- inbox's phrase filter. Each stored match wrote one index entry more
-- for nothing, inside the owner's lock that orders their matches.

DROP INDEX matches_phrase;
