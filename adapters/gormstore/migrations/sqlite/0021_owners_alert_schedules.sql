-- owners' alert schedules
--
-- alert_frequency is '' (at once, the sweep's default), 'hourly',
-- 'daily' (at alert_hour in alert_zone) or 'off'; alerts_sent_at is when
-- the owner's last alert email went out (microseconds; 0 when none has).

ALTER TABLE owners ADD COLUMN alert_frequency TEXT NOT NULL DEFAULT '';
ALTER TABLE owners ADD COLUMN alert_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE owners ADD COLUMN alert_zone TEXT NOT NULL DEFAULT '';
ALTER TABLE owners ADD COLUMN alerts_sent_at BIGINT NOT NULL DEFAULT 0;
