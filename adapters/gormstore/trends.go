package gormstore

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// match_day_counts holds, per owner, UTC day of a match's creation,
// platform, intent, score band and phrase, how many matches were scored
// so (migration 25). SetScores keeps it in the transaction that stores
// the scores, through countScored, so the trends are read from a few
// rows per day and never from the matches; a phrase's rows go with it
// (ON DELETE CASCADE), as its matches do.

// countScored adds the matches just scored to the daily counts and
// trims their owners' counts older than core.TrendKeepDays. ms are the
// matches whose first score the transaction stored, so each is counted
// once however often its score is sent. Their rows are read back by id
// in one statement, whatever the updates carried of them. The counts
// are added in key order, so two batches adding to the same rows on
// Postgres lock them in the same order and never deadlock.
func (db *DB) countScored(tx *gorm.DB, ms []core.Match, now time.Time) error {
	if len(ms) == 0 {
		return nil
	}
	ids := make([]string, len(ms))
	owners := map[string]bool{}
	var ownerIDs []string
	for i, m := range ms {
		ids[i] = m.ID
		if !owners[m.OwnerID] {
			owners[m.OwnerID] = true
			ownerIDs = append(ownerIDs, m.OwnerID)
		}
	}
	oldest := core.DayOf(now) - core.TrendKeepDays
	list, _ := json.Marshal(ownerIDs)
	if err := tx.Exec("DELETE FROM match_day_counts WHERE owner_id IN (SELECT "+db.pick("json_array_elements_text(CAST(? AS json))", "value FROM json_each(?)")+
		") AND day < ?", string(list), oldest).Error; err != nil {
		return err
	}
	list, _ = json.Marshal(ids)
	return tx.Exec(`INSERT INTO match_day_counts (owner_id, day, platform, intent, band, phrase_id, n)
		SELECT owner_id, created_us / 86400000000, platform, COALESCE(intent, ''),
			CASE WHEN score >= 90 THEN 9 WHEN score < 0 THEN 0 ELSE score / 10 END, phrase_id, COUNT(*)
		FROM matches
		WHERE id IN (SELECT `+db.pick("json_array_elements_text(CAST(? AS json))", "value FROM json_each(?)")+`) AND score IS NOT NULL AND created_us >= ?
		GROUP BY 1, 2, 3, 4, 5, 6
		ORDER BY 1, 2, 3, 4, 5, 6
		ON CONFLICT (owner_id, day, platform, intent, band, phrase_id) DO UPDATE SET n = match_day_counts.n + excluded.n`,
		string(list), oldest*86_400_000_000).Error
}

// TrendStore reads the daily counts.
type TrendStore struct{ db *DB }

var _ ports.TrendStore = (*TrendStore)(nil)

// NewTrendStore returns the trend store of db.
func NewTrendStore(db *DB) *TrendStore { return &TrendStore{db: db} }

// DayCounts implements ports.TrendStore. The owner's rows of the span
// are summed over phrases in the order of the key, so SQLite adds them
// up as it walks the key, without sorting; one phrase's are found by
// the phrase index.
func (s *TrendStore) DayCounts(ctx context.Context, ownerID, phraseID string, from, to int64) ([]core.DayCount, error) {
	q, args := "SELECT day, platform, intent, band, SUM(n) FROM match_day_counts WHERE owner_id = ? AND day BETWEEN ? AND ?", []any{ownerID, from, to}
	if phraseID != "" {
		q, args = q+" AND phrase_id = ?", append(args, phraseID)
	}
	if !storable(ownerID) || !storable(phraseID) {
		return nil, nil // no row holds one; Postgres would refuse the statement
	}
	rows, err := scanAll(s.db.with(ctx).Raw(q+" GROUP BY day, platform, intent, band", args...), func(c *dayCountRow) []any {
		return []any{&c.Day, &c.Platform, &c.Intent, &c.Band, &c.N}
	})
	if err != nil {
		return nil, translate(err, "trends")
	}
	return convert(rows, dayCountRow.count), nil
}

type dayCountRow struct {
	Day              int64
	Platform, Intent string
	Band             int
	N                int64
}

func (r dayCountRow) count() core.DayCount {
	return core.DayCount{Day: r.Day, Platform: core.Platform(r.Platform), Intent: core.Intent(r.Intent), Band: r.Band, N: r.N}
}
