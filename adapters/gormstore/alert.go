package gormstore

import (
	"cmp"
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
)

// AlertStore finds matches for email alerts.
type AlertStore struct{ db *DB }

func NewAlertStore(db *DB) *AlertStore { return &AlertStore{db: db} }

// alertDue are the matches whose alert is owed at a minimum score.
const alertDue = "emailed_at = 0 AND score IS NOT NULL AND score >= ?"

func (s *AlertStore) AlertOwners(ctx context.Context, minScore int) ([]core.Owner, error) {
	db := s.db.with(ctx)
	return list(db.Where("alert_frequency <> ? AND id IN (?)", string(core.AlertOff),
		db.Model(&matchRow{}).Distinct("owner_id").Where(alertDue, minScore)).Order("id"),
		"owner", ownerRow.owner)
}

func (s *AlertStore) PendingAlerts(ctx context.Context, ownerID string, minScore, limit int) ([]core.Match, error) {
	return list(s.db.with(ctx).Where("owner_id = ? AND "+alertDue, ownerID, minScore).
		Order("score DESC, created_us DESC").Limit(limit), "match", matchRow.match)
}

func (s *AlertStore) MarkEmailed(ctx context.Context, ownerID string, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&matchRow{}).Where("owner_id = ? AND id IN ?", ownerID, ids).Update("emailed_at", micros(at)).Error; err != nil {
			return err
		}
		return tx.Model(&ownerRow{}).Where("id = ?", ownerID).Update("alerts_sent_at", micros(at)).Error
	}), "match")
}

// AlertSchedule implements ports.AlertStore. The empty frequency stored
// by default is core.AlertAtOnce.
func (s *AlertStore) AlertSchedule(ctx context.Context, ownerID string) (core.AlertSchedule, time.Time, error) {
	var row ownerRow
	if err := s.db.with(ctx).Take(&row, "id = ?", ownerID).Error; err != nil {
		return core.AlertSchedule{}, time.Time{}, translate(err, "owner")
	}
	freq := cmp.Or(core.AlertFrequency(row.AlertFrequency), core.AlertAtOnce)
	return core.AlertSchedule{Frequency: freq, Hour: row.AlertHour, Zone: row.AlertZone}, fromMicros(row.AlertsSentAt), nil
}

// SetAlertSchedule implements ports.AlertStore. At once is stored as the
// empty default, so owners who never chose it read the same.
func (s *AlertStore) SetAlertSchedule(ctx context.Context, ownerID string, sched core.AlertSchedule) error {
	freq := string(sched.Frequency)
	if sched.Frequency == core.AlertAtOnce {
		freq = ""
	}
	return translate(affected(s.db.write(ctx).Model(&ownerRow{}).Where("id = ?", ownerID).
		Updates(map[string]any{"alert_frequency": freq, "alert_hour": sched.Hour, "alert_zone": sched.Zone})), "owner")
}
