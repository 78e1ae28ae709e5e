package gormstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// notWebhook leaves webhooks out of a query on the webhooks table.
const notWebhook = "kind <> 'webhook'"

// ChannelStore keeps what is a channel's own: the columns kind, frequency,
// digest_hour, digest_zone and last_digest_at of a webhook row.
type ChannelStore struct{ db *DB }

var _ ports.ChannelStore = (*ChannelStore)(nil)

func NewChannelStore(db *DB) *ChannelStore { return &ChannelStore{db: db} }

func (s *ChannelStore) CreateChannel(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error {
	if !w.Kind.IsChannel() {
		return core.Errorf(core.KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	}
	err := create(s.db.write(ctx), w, webhookRow{Kind: string(w.Kind), Frequency: string(w.Schedule.Frequency),
		DigestHour: w.Schedule.Hour, DigestZone: w.Schedule.Zone, LastDigestAt: micros(w.LastDigestAt)}, allow, seal)
	return translate(err, "channel")
}

func (s *ChannelStore) UpdateChannel(ctx context.Context, ownerID, id string, change func(core.Webhook, []byte) (core.Webhook, []byte, error)) (core.Webhook, error) {
	return s.UpdateChannelPeriod(ctx, ownerID, id, change, nil, 0)
}

// UpdateChannelPeriod implements ports.ChannelStore. The row is held NO
// KEY: the period's end waits for the scoring under way, which reads the
// channel KEY SHARE.
func (s *ChannelStore) UpdateChannelPeriod(ctx context.Context, ownerID, id string, change func(core.Webhook, []byte) (core.Webhook, []byte, error),
	end ports.PeriodEnd, keep int) (core.Webhook, error) {
	var row webhookRow
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(lockNoKeyUpdate).Take(&row, "id = ? AND owner_id = ? AND "+notWebhook, id, ownerID).Error; err != nil {
			return err
		}
		was := row.webhook()
		w, sealed, err := change(was, row.Secret)
		if err != nil {
			return err
		}
		if end != nil && was.Active && was.Schedule.Digest() && (!w.Active || !w.Schedule.Digest()) {
			if err := s.db.endPeriod(tx, &row, end, keep); err != nil {
				return err
			}
			w.LastDigestAt = fromMicros(row.LastDigestAt)
		}
		cols := webhookColumns(w)
		cols["frequency"], cols["digest_hour"], cols["digest_zone"] = string(w.Schedule.Frequency), w.Schedule.Hour, w.Schedule.Zone
		cols["last_digest_at"] = micros(w.LastDigestAt)
		if sealed != nil {
			cols["secret"], cols["url"] = sealed, w.URL
		}
		return tx.Model(&row).Updates(cols).Error
	})
	if err != nil {
		return core.Webhook{}, translate(err, "channel")
	}
	return row.webhook(), nil
}

// endPeriod ends row's open digest period as end says, once the scoring
// under way is stored and with later scoring held until tx ends.
func (db *DB) endPeriod(tx *gorm.DB, row *webhookRow, end ports.PeriodEnd, keep int) error {
	if err := db.holdScoring(tx); err != nil {
		return err
	}
	ch := row.webhook()
	at, d, err := end(ch, func(from, to time.Time, limit int) ([]core.Match, int, error) {
		return digestMatches(tx, ch, from, to, limit)
	})
	if err != nil {
		return err
	}
	return addDigest(tx, row, at, d, keep)
}

func (s *ChannelStore) DigestChannels(ctx context.Context) ([]core.Webhook, error) {
	return list(s.db.with(ctx).Where(notWebhook+" AND active = ? AND frequency IN ?", true,
		[]core.AlertFrequency{core.AlertHourly, core.AlertDaily}).Order("id"), "channel", webhookRow.webhook)
}

// DigestMatches implements ports.ChannelStore. It reads after the
// scoring under way (scoringBarrier). The owner's matches by scored_at
// are an index range (matches_owner_scored).
func (s *ChannelStore) DigestMatches(ctx context.Context, ch core.Webhook, from, to time.Time, limit int) ([]core.Match, int, error) {
	if err := s.db.scoringBarrier(ctx, to); err != nil {
		return nil, 0, translate(err, "match")
	}
	ms, n, err := digestMatches(s.db.with(ctx), ch, from, to, limit)
	return ms, n, translate(err, "match")
}

func digestMatches(db *gorm.DB, ch core.Webhook, from, to time.Time, limit int) ([]core.Match, int, error) {
	q := db.Model(&matchRow{}).Where("owner_id = ? AND score IS NOT NULL AND score >= ? AND scored_at >= ? AND scored_at < ?",
		ch.OwnerID, ch.MinScore, micros(from), micros(to))
	if len(ch.Platforms) > 0 && len(ch.Platforms) < len(core.Platforms) {
		q = q.Where("platform IN ?", ch.Platforms)
	}
	var n int64
	if err := q.Session(&gorm.Session{}).Count(&n).Error; err != nil || n == 0 || limit <= 0 {
		return nil, int(n), err
	}
	rows, err := scanAll(q.Session(&gorm.Session{}).Select(matchColumns).Order("score DESC, created_us DESC, id DESC").Limit(limit),
		(*matchRow).fields)
	return convert(rows, matchRow.match), int(n), err
}

func (s *ChannelStore) AddDigest(ctx context.Context, ch core.Webhook, at time.Time, d *core.Delivery, keep int) (bool, error) {
	done := false
	_, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *webhookRow) error {
		if !row.Active || !row.webhook().Schedule.Digest() || row.LastDigestAt != micros(ch.LastDigestAt) {
			return nil
		}
		done = true
		return addDigest(tx, row, at, d, keep)
	}, "id = ? AND owner_id = ? AND "+notWebhook, ch.ID, ch.OwnerID)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return done && err == nil, translate(err, "channel")
}

// addDigest ends row's period at at and queues d, when not nil, as
// AddDigest says.
func addDigest(tx *gorm.DB, row *webhookRow, at time.Time, d *core.Delivery, keep int) error {
	if err := tx.Model(row).Update("last_digest_at", micros(at)).Error; err != nil {
		return err
	}
	if row.LastDigestAt = micros(at); d == nil {
		return nil
	}
	add, now := *d, tx.NowFunc()
	add.ID, add.WebhookID, add.OwnerID = newID(), row.ID, row.OwnerID
	add.Status, add.CreatedAt, add.NextAttemptAt = core.DeliveryQueued, now, now
	return addDelivery(tx, add, keep)
}
