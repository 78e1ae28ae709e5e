package gormstore

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// AlertStore finds matches for email alerts.
type AlertStore struct{ db *DB }

var _ ports.AlertStore = (*AlertStore)(nil)

// NewAlertStore returns the alert store of db.
func NewAlertStore(db *DB) *AlertStore { return &AlertStore{db: db} }

// alertDue are the matches whose alert is owed at a minimum score.
const alertDue = "emailed_at = 0 AND score IS NOT NULL AND score >= ?"

// AlertOwners implements ports.AlertStore.
func (s *AlertStore) AlertOwners(ctx context.Context, minScore int) ([]core.Owner, error) {
	db := s.db.with(ctx)
	return list(db.Where("id IN (?)", db.Model(&matchRow{}).Distinct("owner_id").Where(alertDue, minScore)).Order("id"),
		"owner", ownerRow.owner)
}

// PendingAlerts implements ports.AlertStore.
func (s *AlertStore) PendingAlerts(ctx context.Context, ownerID string, minScore, limit int) ([]core.Match, error) {
	return list(s.db.with(ctx).Where("owner_id = ? AND "+alertDue, ownerID, minScore).
		Order("score DESC, created_us DESC").Limit(limit), "match", matchRow.match)
}

// MarkEmailed implements ports.AlertStore.
func (s *AlertStore) MarkEmailed(ctx context.Context, ownerID string, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.db.with(ctx).Model(&matchRow{}).Where("owner_id = ? AND id IN ?", ownerID, ids).
		Update("emailed_at", micros(at)).Error, "match")
}
