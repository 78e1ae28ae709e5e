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
	row, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *webhookRow) error {
		w, sealed, err := change(row.webhook(), row.Secret)
		if err != nil {
			return err
		}
		cols := webhookColumns(w)
		cols["frequency"], cols["digest_hour"], cols["digest_zone"] = string(w.Schedule.Frequency), w.Schedule.Hour, w.Schedule.Zone
		cols["last_digest_at"] = micros(w.LastDigestAt)
		if sealed != nil {
			cols["secret"], cols["url"] = sealed, w.URL
		}
		return tx.Model(row).Updates(cols).Error
	}, "id = ? AND owner_id = ? AND "+notWebhook, id, ownerID)
	if err != nil {
		return core.Webhook{}, translate(err, "channel")
	}
	return row.webhook(), nil
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
	q := s.db.with(ctx).Model(&matchRow{}).Where("owner_id = ? AND score IS NOT NULL AND score >= ? AND scored_at >= ? AND scored_at < ?",
		ch.OwnerID, ch.MinScore, micros(from), micros(to))
	if len(ch.Platforms) > 0 && len(ch.Platforms) < len(core.Platforms) {
		q = q.Where("platform IN ?", ch.Platforms)
	}
	var n int64
	if err := q.Session(&gorm.Session{}).Count(&n).Error; err != nil {
		return nil, 0, translate(err, "match")
	}
	if n == 0 || limit <= 0 {
		return nil, int(n), nil
	}
	rows, err := scanAll(q.Session(&gorm.Session{}).Select(matchColumns).Order("score DESC, created_us DESC, id DESC").Limit(limit),
		(*matchRow).fields)
	if err != nil {
		return nil, 0, translate(err, "match")
	}
	return convert(rows, matchRow.match), int(n), nil
}

func (s *ChannelStore) AddDigest(ctx context.Context, ch core.Webhook, at time.Time, d *core.Delivery, keep int) (bool, error) {
	done := false
	_, err := locked(s.db.write(ctx), func(tx *gorm.DB, row *webhookRow) error {
		if !row.Active || !row.webhook().Schedule.Digest() || row.LastDigestAt != micros(ch.LastDigestAt) {
			return nil
		}
		done = true
		if err := tx.Model(row).Update("last_digest_at", micros(at)).Error; err != nil || d == nil {
			return err
		}
		add, now := *d, tx.NowFunc()
		add.ID, add.WebhookID, add.OwnerID = newID(), row.ID, row.OwnerID
		add.Status, add.CreatedAt, add.NextAttemptAt = core.DeliveryQueued, now, now
		return addDelivery(tx, add, keep)
	}, "id = ? AND owner_id = ? AND "+notWebhook, ch.ID, ch.OwnerID)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return done && err == nil, translate(err, "channel")
}
