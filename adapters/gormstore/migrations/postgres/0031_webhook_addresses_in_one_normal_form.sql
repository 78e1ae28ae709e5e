-- webhook addresses in one normal form
--
-- core.CheckWebhookURL now gives an empty path as "/" and decodes the
-- escaped letters, digits, "-", "_" and "~" of the path (RFC 3986 6.2.2.2,
-- 6.2.3), so webhooks_owner_url refuses a second spelling of one address.
-- This step brings the webhooks stored before to that form, so a new
-- spelling of an old address is refused too. The query is kept as it was;
-- the host of a stored address holds no escape. A row whose normal form
-- another webhook of its owner has or would get is left as it was: both
-- were accepted as two webhooks, each with its secret and log, and
-- neither is dropped. Channels are not touched: their url is a redacted
-- label, not under the index. Each webhook is sent the same request as
-- before: the sender already sends to the normal form.

-- Several steps of REPLACE, since SQLite's parser nests only so deep.
CREATE TEMP TABLE webhook_url_normal AS
SELECT id, owner_id, url,
	CASE WHEN strpos(url, '?') > 0 THEN substr(url, 1, strpos(url, '?') - 1) ELSE url END AS path,
	CASE WHEN strpos(url, '?') > 0 THEN substr(url, strpos(url, '?')) ELSE '' END AS tail
FROM webhooks WHERE kind = 'webhook';

UPDATE webhook_url_normal SET path = CASE WHEN strpos(substr(path, strpos(path, '://') + 3), '/') = 0 THEN path || '/' ELSE path END;
UPDATE webhook_url_normal SET path =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(path
		, '%30', '0')
		, '%31', '1')
		, '%32', '2')
		, '%33', '3')
		, '%34', '4')
		, '%35', '5')
		, '%36', '6')
		, '%37', '7')
		, '%38', '8')
		, '%39', '9')
		, '%41', 'A')
		, '%42', 'B')
		, '%43', 'C')
		, '%44', 'D')
		, '%45', 'E')
		, '%46', 'F')
		, '%47', 'G')
		, '%48', 'H')
		, '%49', 'I')
		, '%4A', 'J')
		, '%4a', 'J');
UPDATE webhook_url_normal SET path =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(path
		, '%4B', 'K')
		, '%4b', 'K')
		, '%4C', 'L')
		, '%4c', 'L')
		, '%4D', 'M')
		, '%4d', 'M')
		, '%4E', 'N')
		, '%4e', 'N')
		, '%4F', 'O')
		, '%4f', 'O')
		, '%50', 'P')
		, '%51', 'Q')
		, '%52', 'R')
		, '%53', 'S')
		, '%54', 'T')
		, '%55', 'U')
		, '%56', 'V')
		, '%57', 'W')
		, '%58', 'X')
		, '%59', 'Y')
		, '%5A', 'Z');
UPDATE webhook_url_normal SET path =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(path
		, '%5a', 'Z')
		, '%61', 'a')
		, '%62', 'b')
		, '%63', 'c')
		, '%64', 'd')
		, '%65', 'e')
		, '%66', 'f')
		, '%67', 'g')
		, '%68', 'h')
		, '%69', 'i')
		, '%6A', 'j')
		, '%6a', 'j')
		, '%6B', 'k')
		, '%6b', 'k')
		, '%6C', 'l')
		, '%6c', 'l')
		, '%6D', 'm')
		, '%6d', 'm')
		, '%6E', 'n')
		, '%6e', 'n')
		, '%6F', 'o');
UPDATE webhook_url_normal SET path =
	REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(path
		, '%6f', 'o')
		, '%70', 'p')
		, '%71', 'q')
		, '%72', 'r')
		, '%73', 's')
		, '%74', 't')
		, '%75', 'u')
		, '%76', 'v')
		, '%77', 'w')
		, '%78', 'x')
		, '%79', 'y')
		, '%7A', 'z')
		, '%7a', 'z')
		, '%2D', '-')
		, '%2d', '-')
		, '%5F', '_')
		, '%5f', '_')
		, '%7E', '~')
		, '%7e', '~');

UPDATE webhooks SET url = (SELECT n.path || n.tail FROM webhook_url_normal n WHERE n.id = webhooks.id)
WHERE id IN (SELECT n.id FROM webhook_url_normal n WHERE n.path || n.tail <> n.url
	AND NOT EXISTS (SELECT 1 FROM webhook_url_normal o WHERE o.owner_id = n.owner_id AND o.id <> n.id AND o.path || o.tail = n.path || n.tail));

DROP TABLE webhook_url_normal;
