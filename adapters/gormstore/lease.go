package gormstore

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// LeaseStore keeps named leases in the database, shared by every replica.
type LeaseStore struct{ db *DB }

var _ ports.LeaseStore = (*LeaseStore)(nil)

// NewLeaseStore returns the lease store of db.
func NewLeaseStore(db *DB) *LeaseStore { return &LeaseStore{db: db} }

// Acquire implements ports.LeaseStore. One statement decides: an insert
// that, on a taken name, overwrites only an expired lease or the
// holder's own, so two replicas can never both win.
func (s *LeaseStore) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	now := s.db.gorm.NowFunc()
	res := s.db.with(ctx).Exec(`INSERT INTO leases (name, holder, until) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.until < ? OR leases.holder = excluded.holder`,
		name, holder, micros(now.Add(ttl)), micros(now))
	if res.Error != nil {
		return false, translate(res.Error, "lease")
	}
	return res.RowsAffected == 1, nil
}

// Release implements ports.LeaseStore.
func (s *LeaseStore) Release(ctx context.Context, name, holder string) error {
	return translate(s.db.with(ctx).Exec("DELETE FROM leases WHERE name = ? AND holder = ?", name, holder).Error, "lease")
}

// AlertStore finds matches for email alerts.
type AlertStore struct{ db *DB }

var _ ports.AlertStore = (*AlertStore)(nil)

// NewAlertStore returns the alert store of db.
func NewAlertStore(db *DB) *AlertStore { return &AlertStore{db: db} }

// AlertOwners implements ports.AlertStore.
func (s *AlertStore) AlertOwners(ctx context.Context, minScore int) ([]core.Owner, error) {
	var rows []ownerRow
	err := s.db.with(ctx).Raw(`SELECT * FROM owners WHERE id IN (
		SELECT DISTINCT owner_id FROM matches WHERE emailed_at = 0 AND score IS NOT NULL AND score >= ?) ORDER BY id`, minScore).
		Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "owner")
	}
	out := make([]core.Owner, len(rows))
	for i, r := range rows {
		out[i] = core.Owner{ID: r.ID, Email: r.Email, Name: r.Name, CreatedAt: fromMicros(r.CreatedAt)}
	}
	return out, nil
}

// PendingAlerts implements ports.AlertStore.
func (s *AlertStore) PendingAlerts(ctx context.Context, ownerID string, minScore, limit int) ([]core.Match, error) {
	rows, err := s.db.query(ctx, "SELECT "+matchColumns+` FROM matches
		WHERE owner_id = ? AND emailed_at = 0 AND score IS NOT NULL AND score >= ?
		ORDER BY score DESC, created_us DESC LIMIT ?`, ownerID, minScore, limit)
	return collectMatches(rows, err)
}

// MarkEmailed implements ports.AlertStore.
func (s *AlertStore) MarkEmailed(ctx context.Context, ownerID string, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.db.with(ctx).Exec("UPDATE matches SET emailed_at = ? WHERE owner_id = ? AND id IN ?",
		micros(at), ownerID, ids).Error, "match")
}
