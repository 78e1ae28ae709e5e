package gormstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// match_day_counts holds, per owner, UTC day of a match's creation,
// platform, intent and phrase, how many matches were scored in each of
// the ten score bands, one column each (migration 24). SetScores keeps
// it in the transaction that stores the scores, through countScored, so
// the trends are read from a few rows per day and never from the
// matches; a phrase's rows go with it (ON DELETE CASCADE), as its
// matches do.

// bandColumns are the count columns, band0 to band9, in band order.
var bandColumns = func() []string {
	cols := make([]string, core.ScoreBands)
	for b := range cols {
		cols[b] = "band" + strconv.Itoa(b)
	}
	return cols
}()

// countStatement adds the matches named by a JSON array of ids and
// created no earlier than a time to the counts, summed per key and
// band in key order, so two batches adding to the same rows on Postgres
// lock them in the same order and never deadlock. Its %s is the
// dialect's reading of the array.
var countStatement = func() string {
	var sums, adds []string
	for b, c := range bandColumns {
		sums = append(sums, "SUM(CASE WHEN band = "+strconv.Itoa(b)+" THEN 1 ELSE 0 END)")
		adds = append(adds, c+" = match_day_counts."+c+" + excluded."+c)
	}
	return `INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, ` + strings.Join(bandColumns, ", ") + `)
		SELECT owner_id, day, platform, intent, phrase_id, ` + strings.Join(sums, ", ") + `
		FROM (
			SELECT owner_id, created_us / 86400000000 AS day, platform, COALESCE(intent, '') AS intent, phrase_id,
				CASE WHEN score >= 90 THEN 9 WHEN score < 0 THEN 0 ELSE score / 10 END AS band
			FROM matches
			WHERE id IN (SELECT %s) AND score IS NOT NULL AND created_us >= ?
		) AS scored
		WHERE true
		GROUP BY owner_id, day, platform, intent, phrase_id
		ORDER BY owner_id, day, platform, intent, phrase_id
		ON CONFLICT (owner_id, day, platform, intent, phrase_id) DO UPDATE SET ` + strings.Join(adds, ", ")
}()

// countScored adds the matches just scored to the daily counts and
// trims their owners' counts older than core.TrendKeepDays. ms are the
// matches whose first score the transaction stored, so each is counted
// once however often its score is sent. Their rows are read back by id
// in one statement, whatever the updates carried of them.
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
	array := db.pick("json_array_elements_text(CAST(? AS json))", "value FROM json_each(?)")
	oldest := core.DayOf(now) - core.TrendKeepDays
	list, _ := json.Marshal(ownerIDs)
	if err := tx.Exec("DELETE FROM match_day_counts WHERE owner_id IN (SELECT "+array+") AND day < ?", string(list), oldest).Error; err != nil {
		return err
	}
	list, _ = json.Marshal(ids)
	return tx.Exec(fmt.Sprintf(countStatement, array), string(list), oldest*86_400_000_000).Error
}

// TrendStore reads the daily counts.
type TrendStore struct{ db *DB }

var _ ports.TrendStore = (*TrendStore)(nil)

// NewTrendStore returns the trend store of db.
func NewTrendStore(db *DB) *TrendStore { return &TrendStore{db: db} }

// dayCountsQuery sums the bands of an owner's rows of a span per day,
// platform and intent: the order of the key, so SQLite adds them up as
// it walks the key, without sorting.
var dayCountsQuery = func() string {
	var sums []string
	for _, c := range bandColumns {
		sums = append(sums, "SUM("+c+")")
	}
	return "SELECT day, platform, intent, " + strings.Join(sums, ", ") + " FROM match_day_counts WHERE owner_id = ? AND day BETWEEN ? AND ?"
}()

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

type dayCountRow struct {
	Day              int64
	Platform, Intent string
	Bands            [core.ScoreBands]int64
}
