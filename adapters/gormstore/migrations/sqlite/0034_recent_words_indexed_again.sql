-- the window's words indexed again as the matcher cuts them
--
-- The window's text index holds each kept post's words as
-- match.AppendWords cut them when the post was indexed, so that a
-- preview or a backfill finds, through the index, every post the
-- matcher finds. The builds that indexed posts at schema 26 to 32 cut
-- them another way: a full-width form was not its ASCII character
-- ("ＡＣＭＥ" was not "acme") and a run of Han, kana, Hangul, Thai, Lao,
-- Khmer or Myanmar characters was one word ("東京タワー", in which "東京"
-- was no word), so a post kept then was never found by such a phrase.
-- The words cannot be cut in SQL: this step empties the index, and the
-- window's sweep indexes every kept post again (at most 50,000 a
-- sweep). Until it has, the posts not indexed are read directly, as
-- posts kept since the last sweep always are: a preview or a fill reads
-- the newest of them, and says it stopped when it did.

DELETE FROM recent_words;
UPDATE recent_index SET last_id = 0;
