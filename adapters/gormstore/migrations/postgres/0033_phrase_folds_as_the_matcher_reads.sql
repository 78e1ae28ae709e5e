-- phrase folds as the matcher reads characters
--
-- core.FoldKey, by which two phrases of an owner are compared for
-- duplicates, now folds each character as the matcher compares it
-- (core.MatchFold): a typographic apostrophe (U+2018, U+2019, U+201B) is
-- ', and a full-width form of an ASCII character (U+FF01 to U+FF5E but
-- the low line U+FF3F) is that character, before simple case folding.
-- Without this step "Joe’s" could still be added beside a stored "Joe's",
-- and "ＡＣＭＥ" beside "acme", and a post would match both. Each fold
-- stored before is the old key, simple case folding alone (core.FoldRune),
-- which leaves a full-width letter in its upper-case form, the smallest of
-- its case orbit (ａ and Ａ both give U+FF21): so U+FF21 to U+FF3A become
-- a to z, and U+FF41 to U+FF5A are in no stored fold. Nothing else folds
-- to one of these characters, so each fold replaced here is the new key of
-- its phrase.
--
-- Two phrases of an owner whose keys become equal were both accepted, and
-- each keeps its matches and filters: both stay, with the key they now
-- share. The unique index on the key would refuse that, so it becomes a
-- plain one; CreatePhrase still refuses a duplicate, counting under the
-- owner's lock, which orders an owner's creates (it did before; the
-- index only stood behind it).

DROP INDEX phrases_unique;
CREATE INDEX phrases_fold ON phrases(owner_id, platform, community, fold);

-- Several steps of REPLACE, since SQLite's parser nests only so deep.
CREATE TEMP TABLE phrase_fold AS SELECT id, fold AS old, fold FROM phrases;
UPDATE phrase_fold SET fold =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(fold
		, '‘', '''')
		, '’', '''')
		, '‛', '''')
		, '！', '!')
		, '＂', '"')
		, '＃', '#')
		, '＄', '$')
		, '％', '%')
		, '＆', '&')
		, '＇', '''')
		, '（', '(')
		, '）', ')')
		, '＊', '*')
		, '＋', '+');
UPDATE phrase_fold SET fold =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(fold
		, '，', ',')
		, '－', '-')
		, '．', '.')
		, '／', '/')
		, '０', '0')
		, '１', '1')
		, '２', '2')
		, '３', '3')
		, '４', '4')
		, '５', '5')
		, '６', '6')
		, '７', '7')
		, '８', '8')
		, '９', '9');
UPDATE phrase_fold SET fold =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(fold
		, '：', ':')
		, '；', ';')
		, '＜', '<')
		, '＝', '=')
		, '＞', '>')
		, '？', '?')
		, '＠', '@')
		, 'Ａ', 'a')
		, 'Ｂ', 'b')
		, 'Ｃ', 'c')
		, 'Ｄ', 'd')
		, 'Ｅ', 'e')
		, 'Ｆ', 'f')
		, 'Ｇ', 'g');
UPDATE phrase_fold SET fold =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(fold
		, 'Ｈ', 'h')
		, 'Ｉ', 'i')
		, 'Ｊ', 'j')
		, 'Ｋ', 'k')
		, 'Ｌ', 'l')
		, 'Ｍ', 'm')
		, 'Ｎ', 'n')
		, 'Ｏ', 'o')
		, 'Ｐ', 'p')
		, 'Ｑ', 'q')
		, 'Ｒ', 'r')
		, 'Ｓ', 's')
		, 'Ｔ', 't')
		, 'Ｕ', 'u');
UPDATE phrase_fold SET fold =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(fold
		, 'Ｖ', 'v')
		, 'Ｗ', 'w')
		, 'Ｘ', 'x')
		, 'Ｙ', 'y')
		, 'Ｚ', 'z')
		, '［', '[')
		, '＼', '\')
		, '］', ']')
		, '＾', '^')
		, '｀', '`')
		, '｛', '{')
		, '｜', '|')
		, '｝', '}')
		, '～', '~');

UPDATE phrases SET fold = (SELECT n.fold FROM phrase_fold n WHERE n.id = phrases.id)
WHERE id IN (SELECT n.id FROM phrase_fold n WHERE n.fold <> n.old);

DROP TABLE phrase_fold;
