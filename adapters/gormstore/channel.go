package gormstore

import (
	"context"
	"errors"
	"maps"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// withChannel returns w with the kind and frequency of r, the columns
// that make a webhook row a channel (migration 25). A webhook's are
// the defaults: kind 'webhook', frequency ” (at once).
func (r webhookRow) withChannel(w core.Webhook) core.Webhook {
	w.Kind = core.ChannelKind(r.Kind).Normal()
	w.Schedule = core.AlertSchedule{Frequency: core.AlertFrequency(r.Frequency), Hour: r.DigestHour, Zone: r.DigestZone}
	w.LastDigestAt = fromMicros(r.LastDigestAt)
	return w
}

// channelColumns are the columns of w that make a row a channel.
func channelColumns(w core.Webhook) map[string]any {
	return map[string]any{"kind": string(w.Kind.Normal()), "frequency": string(w.Schedule.Frequency), "digest_hour": w.Schedule.Hour,
		"digest_zone": w.Schedule.Zone, "last_digest_at": micros(w.LastDigestAt)}
}

// BeforeCreate spells out the kind of a row made without one, a
// webhook's (CreateWebhook): the address is unique among rows of kind
// 'webhook', and ” would escape that index.
func (r *webhookRow) BeforeCreate(*gorm.DB) error {
	if r.Kind == "" {
		r.Kind = string(core.ChannelWebhook)
	}
	return nil
}

// notWebhook leaves webhooks out of a query on the webhooks table.
const notWebhook = "kind <> 'webhook'"

// ChannelStore keeps what is a channel's own (ports.ChannelStore) on the
// webhooks table; everything else of a channel is the WebhookStore's.
type ChannelStore struct{ db *DB }

var _ ports.ChannelStore = (*ChannelStore)(nil)

// NewChannelStore returns the channel store of db.
func NewChannelStore(db *DB) *ChannelStore { return &ChannelStore{db: db} }

// CreateChannel implements ports.ChannelStore.
func (s *ChannelStore) CreateChannel(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error {
	if !w.Kind.IsChannel() {
		return core.Errorf(core.KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	}
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		// The owner's lock orders creates of webhooks and channels alike,
		// so allow sees every one made before.
		if _, err := lockOwner(tx, w.OwnerID); err != nil {
			return translate(err, "owner")
		}
		u, err := usage(tx, w.OwnerID)
		if err != nil {
			return err
		}
		if err := allow(u); err != nil {
			return err
		}
		id := newID()
		sealed, err := seal(id)
		if err != nil {
			return err
		}
		row := webhookRow{
			ID: id, OwnerID: w.OwnerID, URL: w.URL, MinScore: w.MinScore, Platforms: joinList(w.Platforms),
			Active: w.Active, DisabledReason: w.DisabledReason, Secret: sealed, CreatedAt: micros(tx.NowFunc()),
			Kind: string(w.Kind), Frequency: string(w.Schedule.Frequency), DigestHour: w.Schedule.Hour, DigestZone: w.Schedule.Zone,
			LastDigestAt: micros(w.LastDigestAt),
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		*w = row.webhook()
		return nil
	})
	return translate(err, "channel")
}

// UpdateChannel implements ports.ChannelStore.
func (s *ChannelStore) UpdateChannel(ctx context.Context, ownerID, id string, change func(core.Webhook, []byte) (core.Webhook, []byte, error)) (core.Webhook, error) {
	var row webhookRow
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(lockForUpdate).Take(&row, "id = ? AND owner_id = ? AND "+notWebhook, id, ownerID).Error; err != nil {
			return err
		}
		w, sealed, err := change(row.webhook(), row.Secret)
		if err != nil {
			return err
		}
		cols := webhookColumns(w)
		maps.Copy(cols, channelColumns(w))
		delete(cols, "kind") // a channel's kind never changes
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

// DigestChannels implements ports.ChannelStore.
func (s *ChannelStore) DigestChannels(ctx context.Context) ([]core.Webhook, error) {
	return list(s.db.with(ctx).Where(notWebhook+" AND active = ? AND frequency IN ?", true,
		[]core.AlertFrequency{core.AlertHourly, core.AlertDaily}).Order("id"), "channel", webhookRow.webhook)
}

// DigestMatches implements ports.ChannelStore. The owner's matches by
// scored_at are an index range (matches_owner_scored).
func (s *ChannelStore) DigestMatches(ctx context.Context, ch core.Webhook, from, to time.Time, limit int) ([]core.Match, int, error) {
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

// AddDigest implements ports.ChannelStore.
func (s *ChannelStore) AddDigest(ctx context.Context, ch core.Webhook, at time.Time, d *core.Delivery, keep int) (bool, error) {
	done := false
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		var row webhookRow
		err := tx.Clauses(lockForUpdate).Take(&row, "id = ? AND owner_id = ? AND "+notWebhook, ch.ID, ch.OwnerID).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !row.Active || !row.webhook().Schedule.Digest() || row.LastDigestAt != micros(ch.LastDigestAt) {
			return nil // another sweep ended the period, or the channel changed: it is theirs, or the next sweep's
		}
		if d != nil {
			now := tx.NowFunc()
			add := *d
			add.ID, add.WebhookID, add.OwnerID = newID(), row.ID, row.OwnerID
			add.Status, add.CreatedAt, add.NextAttemptAt = core.DeliveryQueued, now, now
			r := newDeliveryRow(add)
			if err := tx.Create(&r).Error; err != nil {
				return err
			}
		}
		if err := tx.Model(&row).Update("last_digest_at", micros(at)).Error; err != nil {
			return err
		}
		done = true
		if d == nil {
			return nil
		}
		return trimLog(tx, row.ID, keep)
	})
	if err != nil {
		return false, translate(err, "channel")
	}
	return done, nil
}
