package gormstore

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// healthSQL adds the health of connected accounts and the owners'
// notifications. raw_signal is the kept part of the signal as JSON,
// empty when none.
const healthSQL = `
ALTER TABLE accounts ADD COLUMN last_issue TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN raw_signal TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN last_checked_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN retry_after BIGINT NOT NULL DEFAULT 0;
CREATE TABLE notifications (
	id          TEXT PRIMARY KEY,
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	kind        TEXT NOT NULL,
	subject_id  TEXT NOT NULL DEFAULT '',
	platform    TEXT NOT NULL DEFAULT '',
	severity    TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT '',
	issue       TEXT NOT NULL DEFAULT '',
	action      TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL DEFAULT '',
	message     TEXT NOT NULL DEFAULT '',
	email       BOOLEAN NOT NULL DEFAULT FALSE,
	created_at  BIGINT NOT NULL,
	read_at     BIGINT NOT NULL DEFAULT 0,
	emailed_at  BIGINT NOT NULL DEFAULT 0,
	lease_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX notifications_owner ON notifications(owner_id, created_at);
CREATE INDEX notifications_owed ON notifications(created_at) WHERE email AND emailed_at = 0;
`

// healthRow is an account row with its health columns; the session is
// never read here.
type healthRow struct {
	ID            string `gorm:"primaryKey"`
	OwnerID       string
	Platform      string
	Label         string
	HasSession    bool  `gorm:"->;column:has_session"`
	CreatedAt     int64 `gorm:"autoCreateTime:false"`
	LastIssue     string
	RawSignal     string
	LastCheckedAt int64
	RetryAfter    int64
}

func (healthRow) TableName() string { return "accounts" }

const healthColumns = "id, owner_id, platform, label, COALESCE(length(session), 0) > 0 AS has_session, created_at, last_issue, raw_signal, last_checked_at, retry_after"

// rawSignalJSON is the stored form of a raw signal.
type rawSignalJSON struct {
	Status     int  `json:"status"`
	Code       int  `json:"code"`
	Subcode    int  `json:"subcode"`
	NoResponse bool `json:"noResponse"`
	ViaProxy   bool `json:"viaProxy"`
}

func (r healthRow) health() ports.AccountHealth {
	a := ports.AccountHealth{
		Account: core.Account{ID: r.ID, OwnerID: r.OwnerID, Platform: core.Platform(r.Platform), Label: r.Label,
			HasSession: r.HasSession, CreatedAt: fromMicros(r.CreatedAt)},
		Health: health.Record{LastIssue: health.Issue(r.LastIssue), LastCheckedAt: fromMicros(r.LastCheckedAt),
			RetryAfter: fromMicros(r.RetryAfter)},
	}
	var raw rawSignalJSON
	if r.RawSignal != "" && json.Unmarshal([]byte(r.RawSignal), &raw) == nil {
		a.Health.RawSignal = &health.RawSignal{Status: raw.Status, Code: raw.Code, Subcode: raw.Subcode,
			NoResponse: raw.NoResponse, ViaProxy: raw.ViaProxy}
	}
	return a
}

func healthColumnsOf(h health.Record) map[string]any {
	raw := ""
	if s := h.RawSignal; s != nil {
		b, _ := json.Marshal(rawSignalJSON{Status: s.Status, Code: s.Code, Subcode: s.Subcode, NoResponse: s.NoResponse, ViaProxy: s.ViaProxy})
		raw = string(b)
	}
	return map[string]any{
		"last_issue": string(h.LastIssue), "raw_signal": raw,
		"last_checked_at": micros(h.LastCheckedAt), "retry_after": micros(h.RetryAfter),
	}
}

// AccountHealthStore keeps the health of connected accounts.
type AccountHealthStore struct{ db *DB }

var _ ports.AccountHealthStore = (*AccountHealthStore)(nil)

// NewAccountHealthStore returns the account health store of db.
func NewAccountHealthStore(db *DB) *AccountHealthStore { return &AccountHealthStore{db: db} }

// AccountHealth implements ports.AccountHealthStore.
func (s *AccountHealthStore) AccountHealth(ctx context.Context, ownerID string) ([]ports.AccountHealth, error) {
	var rows []healthRow
	err := s.db.with(ctx).Model(&healthRow{}).Select(healthColumns).
		Where("owner_id = ?", ownerID).Order("created_at, id").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "account")
	}
	out := make([]ports.AccountHealth, len(rows))
	for i, r := range rows {
		out[i] = r.health()
	}
	return out, nil
}

// UpdateHealth implements ports.AccountHealthStore.
func (s *AccountHealthStore) UpdateHealth(ctx context.Context, ownerID, accountID string,
	change func(ports.AccountHealth) (health.Record, *core.Notification, error)) (ports.AccountHealth, error) {
	var out ports.AccountHealth
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var row healthRow
		q := tx.Model(&healthRow{}).Select(healthColumns).Where("id = ? AND owner_id = ?", accountID, ownerID)
		if s.db.postgres {
			// SQLite's IMMEDIATE transactions already hold the write lock.
			q = q.Clauses(lockForUpdate)
		}
		res := q.Limit(1).Scan(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		cur := row.health()
		next, note, err := change(cur)
		if err != nil {
			return err
		}
		if err := tx.Model(&healthRow{}).Where("id = ? AND owner_id = ?", accountID, ownerID).
			Updates(healthColumnsOf(next)).Error; err != nil {
			return err
		}
		if note != nil {
			note.OwnerID = ownerID
			if err := addNotification(tx, note); err != nil {
				return err
			}
		}
		out = ports.AccountHealth{Account: cur.Account, Health: next}
		return nil
	})
	return out, translate(err, "account")
}

type notificationRow struct {
	ID         string `gorm:"primaryKey"`
	OwnerID    string
	Kind       string
	SubjectID  string
	Platform   string
	Severity   string
	State      string
	Issue      string
	Action     string
	Title      string
	Message    string
	Email      bool
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
	ReadAt     int64
	EmailedAt  int64
	LeaseUntil int64
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
	n.ID = newID()
	n.CreatedAt = tx.NowFunc().Truncate(time.Microsecond).UTC()
	row := notificationRow{
		ID: n.ID, OwnerID: n.OwnerID, Kind: string(n.Kind), SubjectID: n.SubjectID, Platform: string(n.Platform),
		Severity: n.Severity, State: n.State, Issue: n.Issue, Action: n.Action, Title: n.Title, Message: n.Message,
		Email: n.Email, CreatedAt: micros(n.CreatedAt),
	}
	if err := tx.Create(&row).Error; err != nil {
		return err
	}
	// Keep the newest; an email still owed is kept until it is sent.
	return tx.Exec(`DELETE FROM notifications WHERE owner_id = ? AND NOT (email AND emailed_at = 0) AND id NOT IN (
		SELECT id FROM notifications WHERE owner_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
		n.OwnerID, n.OwnerID, core.MaxNotifications).Error
}

// NotificationStore keeps owners' notifications.
type NotificationStore struct{ db *DB }

var _ ports.NotificationStore = (*NotificationStore)(nil)

// NewNotificationStore returns the notification store of db.
func NewNotificationStore(db *DB) *NotificationStore { return &NotificationStore{db: db} }

// AddNotification implements ports.NotificationStore.
func (s *NotificationStore) AddNotification(ctx context.Context, n *core.Notification) error {
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, n.OwnerID); err != nil {
			return err
		}
		return addNotification(tx, n)
	})
	return translate(err, "owner")
}

// Notifications implements ports.NotificationStore.
func (s *NotificationStore) Notifications(ctx context.Context, ownerID string, limit int) ([]core.Notification, int, error) {
	var rows []notificationRow
	db := s.db.with(ctx)
	if err := db.Where("owner_id = ?", ownerID).Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, 0, translate(err, "notification")
	}
	var unread int64
	if err := db.Model(&notificationRow{}).Where("owner_id = ? AND read_at = 0", ownerID).Count(&unread).Error; err != nil {
		return nil, 0, translate(err, "notification")
	}
	out := make([]core.Notification, len(rows))
	for i, r := range rows {
		out[i] = r.notification()
	}
	return out, int(unread), nil
}

// UnreadNotifications implements ports.NotificationStore, on a cached
// statement: every dashboard page asks.
func (s *NotificationStore) UnreadNotifications(ctx context.Context, ownerID string) (int, error) {
	rows, err := s.db.query(ctx, "SELECT COUNT(*) FROM notifications WHERE owner_id = ? AND read_at = 0", ownerID)
	if err != nil {
		return 0, translate(err, "notification")
	}
	defer rows.Close()
	var n int
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, translate(err, "notification")
		}
	}
	return n, translate(rows.Err(), "notification")
}

// MarkRead implements ports.NotificationStore.
func (s *NotificationStore) MarkRead(ctx context.Context, ownerID, id string, at time.Time) error {
	return translate(s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&notificationRow{}).Where("id = ? AND owner_id = ?", id, ownerID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return gorm.ErrRecordNotFound
		}
		return tx.Model(&notificationRow{}).Where("id = ? AND owner_id = ? AND read_at = 0", id, ownerID).
			Update("read_at", micros(at)).Error
	}), "notification")
}

// MarkAllRead implements ports.NotificationStore.
func (s *NotificationStore) MarkAllRead(ctx context.Context, ownerID string, at time.Time) (int, error) {
	res := s.db.with(ctx).Model(&notificationRow{}).Where("owner_id = ? AND read_at = 0", ownerID).Update("read_at", micros(at))
	return int(res.RowsAffected), translate(res.Error, "notification")
}

// ClaimEmails implements ports.NotificationStore.
func (s *NotificationStore) ClaimEmails(ctx context.Context, limit int, lease time.Duration) ([]core.Notification, error) {
	now := s.db.gorm.NowFunc()
	// SKIP LOCKED lets replicas on Postgres claim disjoint rows at once;
	// SQLite has one writer, so the plain form is already exclusive.
	lock := ""
	if s.db.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []notificationRow
	err := s.db.with(ctx).Raw(`UPDATE notifications SET lease_until = ? WHERE id IN (
		SELECT id FROM notifications WHERE email AND emailed_at = 0 AND lease_until < ? ORDER BY created_at, id LIMIT ?`+lock+`)
		RETURNING *`, micros(now.Add(lease)), micros(now), limit).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "notification")
	}
	out := make([]core.Notification, len(rows))
	for i, r := range rows {
		out[i] = r.notification()
	}
	return out, nil
}

// MarkEmailed implements ports.NotificationStore.
func (s *NotificationStore) MarkEmailed(ctx context.Context, id string, at time.Time) error {
	return translate(s.db.with(ctx).Model(&notificationRow{}).Where("id = ?", id).
		Updates(map[string]any{"emailed_at": micros(at), "lease_until": 0}).Error, "notification")
}
