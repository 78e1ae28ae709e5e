package gormstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
)

type notificationRow struct {
	ID                                       string `gorm:"primaryKey"`
	OwnerID, Kind, SubjectID, Platform       string
	Severity, State, Issue, Action           string
	Title, Message                           string
	Email                                    bool
	CreatedAt, ReadAt, EmailedAt, LeaseUntil int64 `gorm:"autoCreateTime:false"` // µs
}

func (notificationRow) TableName() string { return "notifications" }

func (r notificationRow) notification() core.Notification {
	return core.Notification{
		ID: r.ID, OwnerID: r.OwnerID, Kind: core.NotificationKind(r.Kind), SubjectID: r.SubjectID,
		Platform: core.Platform(r.Platform), Severity: r.Severity, State: r.State, Issue: r.Issue, Action: r.Action,
		Title: r.Title, Message: r.Message, Email: r.Email,
		CreatedAt: fromMicros(r.CreatedAt), ReadAt: fromMicros(r.ReadAt), EmailedAt: fromMicros(r.EmailedAt),
	}
}

// addNotification stores n in tx and trims the owner's list.
func addNotification(tx *gorm.DB, n *core.Notification) error {
	n.ID, n.CreatedAt = newID(), tx.NowFunc().Truncate(time.Microsecond)
	if err := tx.Create(&notificationRow{
		ID: n.ID, OwnerID: n.OwnerID, Kind: string(n.Kind), SubjectID: n.SubjectID, Platform: string(n.Platform),
		Severity: n.Severity, State: n.State, Issue: n.Issue, Action: n.Action, Title: n.Title, Message: n.Message,
		Email: n.Email, CreatedAt: micros(n.CreatedAt),
	}).Error; err != nil {
		return err
	}
	// Keep the newest; an email still owed is kept until it is sent.
	newest := tx.Model(&notificationRow{}).Select("id").Where("owner_id = ?", n.OwnerID).
		Order("created_at DESC, id DESC").Limit(core.MaxNotifications)
	return tx.Where("owner_id = ? AND NOT (email AND emailed_at = 0) AND id NOT IN (?)", n.OwnerID, newest).
		Delete(&notificationRow{}).Error
}

// NotificationStore keeps owners' notifications.
type NotificationStore struct{ db *DB }

func NewNotificationStore(db *DB) *NotificationStore { return &NotificationStore{db: db} }

func (s *NotificationStore) AddNotification(ctx context.Context, n *core.Notification) error {
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, n.OwnerID); err != nil {
			return err
		}
		return addNotification(tx, n)
	})
	return translate(err, "owner")
}

func (s *NotificationStore) Notifications(ctx context.Context, ownerID string, limit int) ([]core.Notification, int, error) {
	ns, err := list(s.db.with(ctx).Where("owner_id = ?", ownerID).Order("created_at DESC, id DESC").Limit(limit),
		"notification", notificationRow.notification)
	unread := 0
	if err == nil {
		unread, err = s.UnreadNotifications(ctx, ownerID)
	}
	return ns, unread, err
}

func (s *NotificationStore) UnreadNotifications(ctx context.Context, ownerID string) (int, error) {
	var n int64
	err := s.db.with(ctx).Model(&notificationRow{}).Where("owner_id = ? AND read_at = 0", ownerID).Count(&n).Error
	return int(n), translate(err, "notification")
}

// MarkRead writes a read row too, so that one statement tells an unknown id.
func (s *NotificationStore) MarkRead(ctx context.Context, ownerID, id string, at time.Time) error {
	return translate(affected(s.db.write(ctx).Model(&notificationRow{}).Where("id = ? AND owner_id = ?", id, ownerID).
		Update("read_at", gorm.Expr("CASE WHEN read_at = 0 THEN ? ELSE read_at END", micros(at)))), "notification")
}

func (s *NotificationStore) MarkAllRead(ctx context.Context, ownerID string, at time.Time) (int, error) {
	res := s.db.write(ctx).Model(&notificationRow{}).Where("owner_id = ? AND read_at = 0", ownerID).Update("read_at", micros(at))
	return int(res.RowsAffected), translate(res.Error, "notification")
}

// ClaimEmails implements ports.NotificationStore. SKIP LOCKED lets
// replicas claim disjoint rows; SQLite's one writer makes it exclusive.
// RETURNING gives the rows in the order the update met them, which on
// Postgres is where each row version lies: the claim is sorted oldest
// first here. The candidates are picked once, in a CTE, as in
// ClaimUnscored: an IN (subquery) with a LIMIT may run more than once,
// each run skipping what the last locked, and lease more than limit.
func (s *NotificationStore) ClaimEmails(ctx context.Context, limit int, lease time.Duration) ([]core.Notification, error) {
	now := s.db.gorm.NowFunc()
	ns, err := list(s.db.write(ctx).Raw(`WITH cand AS (
		SELECT id FROM notifications WHERE email AND emailed_at = 0 AND lease_until < ? ORDER BY created_at, id LIMIT ?`+s.db.pick(" FOR UPDATE SKIP LOCKED", "")+`)
		UPDATE notifications SET lease_until = ? WHERE id IN (SELECT id FROM cand) AND emailed_at = 0 AND lease_until < ?
		RETURNING *`, micros(now), limit, micros(now.Add(lease)), micros(now)), "notification", notificationRow.notification)
	slices.SortFunc(ns, func(a, b core.Notification) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return ns, err
}

func (s *NotificationStore) MarkEmailed(ctx context.Context, id string, at time.Time) error {
	return translate(s.db.write(ctx).Model(&notificationRow{}).Where("id = ?", id).
		Updates(map[string]any{"emailed_at": micros(at), "lease_until": 0}).Error, "notification")
}
