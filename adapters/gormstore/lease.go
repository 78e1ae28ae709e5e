package gormstore

import (
	"context"
	"time"
)

// LeaseStore keeps named leases in the database, shared by every replica.
type LeaseStore struct{ db *DB }

func NewLeaseStore(db *DB) *LeaseStore { return &LeaseStore{db: db} }

// Acquire implements ports.LeaseStore. One statement decides, so two
// replicas never both win: on a taken name it overwrites only an expired
// lease or the holder's own.
func (s *LeaseStore) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	now := s.db.gorm.NowFunc()
	res := s.db.write(ctx).Exec(`INSERT INTO leases (name, holder, until) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.until < ? OR leases.holder = excluded.holder`, name, holder, micros(now.Add(ttl)), micros(now))
	return res.RowsAffected == 1, translate(res.Error, "lease")
}

func (s *LeaseStore) Release(ctx context.Context, name, holder string) error {
	return translate(s.db.write(ctx).Exec("DELETE FROM leases WHERE name = ? AND holder = ?", name, holder).Error, "lease")
}
