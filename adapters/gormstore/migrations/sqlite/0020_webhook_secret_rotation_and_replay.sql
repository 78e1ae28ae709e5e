-- webhook secret rotation and replay
--
-- A rotated secret keeps signing beside the new one until
-- previous_secret_until (microseconds; 0 when none is kept), sealed as
-- the secret column is. A replay looks for the newest delivery of each
-- match to a webhook, which the index finds without walking the
-- webhook's queue.

ALTER TABLE webhooks ADD COLUMN previous_secret BLOB;

ALTER TABLE webhooks ADD COLUMN previous_secret_until BIGINT NOT NULL DEFAULT 0;

CREATE INDEX webhook_deliveries_match ON webhook_deliveries(webhook_id, match_id);
