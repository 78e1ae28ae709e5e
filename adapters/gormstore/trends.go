package gormstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// match_day_counts holds, per owner, day, platform, intent and phrase,
// the matches scored in each score band, a column each (migration 24),
// so trends read a few rows a day and never the matches.

// countStatement adds the matches named by a JSON array of ids (its %s
// is jsonValues) and created no earlier than a time to the counts, summed
// per key and band in key order, so two batches adding to the same rows
// on Postgres lock them in the same order and never deadlock.
var countStatement = func() string {
	var cols, counts, adds []string
	for b := range core.ScoreBands {
		c := "band" + strconv.Itoa(b)
		cols = append(cols, c)
		counts = append(counts, "SUM(CASE WHEN band = "+strconv.Itoa(b)+" THEN 1 ELSE 0 END)")
		adds = append(adds, c+" = match_day_counts."+c+" + excluded."+c)
	}
	key := "owner_id, day, platform, intent, phrase_id"
	return `INSERT INTO match_day_counts (` + key + `, ` + strings.Join(cols, ", ") + `)
		SELECT ` + key + `, ` + strings.Join(counts, ", ") + `
		FROM (
			SELECT owner_id, created_us / 86400000000 AS day, platform, COALESCE(intent, '') AS intent, phrase_id,
				CASE WHEN score >= 90 THEN 9 WHEN score < 0 THEN 0 ELSE score / 10 END AS band
			FROM matches
			WHERE id IN (SELECT value FROM %s) AND score IS NOT NULL AND created_us >= ?
		) AS scored
		WHERE true GROUP BY ` + key + ` ORDER BY ` + key + `
		ON CONFLICT (` + key + `) DO UPDATE SET ` + strings.Join(adds, ", ")
}()

// dayCountsQuery sums the bands of an owner's rows of a span per day,
// platform and intent: the key's order, so SQLite adds them up as it
// walks the key, without sorting.
var dayCountsQuery = func() string {
	q := "SELECT day, platform, intent"
	for b := range core.ScoreBands {
		q += ", SUM(band" + strconv.Itoa(b) + ")"
	}
	return q + " FROM match_day_counts WHERE owner_id = ? AND day BETWEEN ? AND ?"
}()

// countScored adds ms, the matches whose first score the transaction
// stored, to the counts, read back by id in one statement, and trims
// their owners' counts older than core.TrendKeepDays.
func (db *DB) countScored(tx *gorm.DB, ms []core.Match, now time.Time) error {
	if len(ms) == 0 {
		return nil
	}
	owners := slices.Compact(slices.Sorted(slices.Values(convert(ms, func(m core.Match) string { return m.OwnerID }))))
	oldest := core.DayOf(now) - core.TrendKeepDays
	list, _ := json.Marshal(owners)
	if err := tx.Exec("DELETE FROM match_day_counts WHERE owner_id IN (SELECT value FROM "+db.jsonValues()+") AND day < ?", string(list), oldest).Error; err != nil {
		return err
	}
	list, _ = json.Marshal(convert(ms, func(m core.Match) string { return m.ID }))
	return tx.Exec(fmt.Sprintf(countStatement, db.jsonValues()), string(list), oldest*86_400_000_000).Error
}

// TrendStore reads the daily counts.
type TrendStore struct{ db *DB }

var _ ports.TrendStore = (*TrendStore)(nil)

func NewTrendStore(db *DB) *TrendStore { return &TrendStore{db: db} }

// DayCounts implements ports.TrendStore. One phrase's rows are found by
// the phrase index.
func (s *TrendStore) DayCounts(ctx context.Context, ownerID, phraseID string, from, to int64) ([]core.DayCount, error) {
	if !storable(ownerID) || !storable(phraseID) {
		return nil, nil // no row holds one; Postgres would refuse the statement
	}
	q, args := dayCountsQuery, []any{ownerID, from, to}
	if phraseID != "" {
		q, args = q+" AND phrase_id = ?", append(args, phraseID)
	}
	type dayCountRow struct {
		Day              int64
		Platform, Intent string
		Bands            [core.ScoreBands]int64
	}
	rows, err := scanAll(s.db.with(ctx).Raw(q+" GROUP BY day, platform, intent", args...), func(r *dayCountRow) []any {
		out := []any{&r.Day, &r.Platform, &r.Intent}
		for b := range r.Bands {
			out = append(out, &r.Bands[b])
		}
		return out
	})
	if err != nil {
		return nil, translate(err, "trends")
	}
	var out []core.DayCount
	for _, r := range rows {
		for b, n := range r.Bands {
			if n > 0 {
				out = append(out, core.DayCount{Day: r.Day, Platform: core.Platform(r.Platform), Intent: core.Intent(r.Intent), Band: b, N: n})
			}
		}
	}
	return out, nil
}
