-- channels beside webhooks
--
-- A channel (Slack, Discord, Telegram, ntfy) is a webhook row of another
-- kind: kind names it ('webhook' for the rows before), url holds only
-- its target's redacted form and secret its sealed target. frequency is
-- '' or 'at once', 'hourly' or 'daily' (at digest_hour in digest_zone);
-- last_digest_at is when its last digest period ended (microseconds; 0
-- before the first). Two channels may show the same redacted form, so
-- an address is unique per owner among webhooks only.

ALTER TABLE webhooks ADD COLUMN kind TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE webhooks ADD COLUMN frequency TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN digest_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN digest_zone TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN last_digest_at BIGINT NOT NULL DEFAULT 0;

DROP INDEX webhooks_owner_url;
CREATE UNIQUE INDEX webhooks_owner_url ON webhooks(owner_id, url) WHERE kind = 'webhook';
