package gormstore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// dialects are the databases a test here runs on: SQLite in a file, and
// Postgres when the test database is set.
func dialects(t *testing.T) map[string]string {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "trends.db")}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = pgtest.URL(t)
	}
	return urls
}

// trendFixture is an owner with an x phrase and n matches of it, stored
// through the match store.
func trendFixture(t *testing.T, db *DB, n int) (core.Owner, core.Phrase, []core.Match) {
	t.Helper()
	ctx := context.Background()
	o, err := core.NewOwner("trends-"+newID()+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var batch []ports.PostMatches
	for range n {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: newID(), Text: "acme"}, PhraseIDs: []string{p.ID}})
	}
	res, err := NewMatchStore(db).SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(res.Matches) != n {
		t.Fatalf("SaveMatches: %d, %v", len(res.Matches), err)
	}
	return o, p, res.Matches
}

// Storing scores trims the counts of the scored matches' owners older
// than core.TrendKeepDays, keeps the last day kept and other owners'
// rows, and counts no match created before that day.
func TestDayCountsTrimmedOnWrite(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o, p, ms := trendFixture(t, db, 3)
			other, op, _ := trendFixture(t, db, 0)
			oldest := core.DayOf(time.Now()) - core.TrendKeepDays
			insert := func(owner, phrase string, day int64) {
				t.Helper()
				if err := db.gorm.Exec("INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, band9) VALUES (?, ?, 'x', 'buying', ?, 7)",
					owner, day, phrase).Error; err != nil {
					t.Fatal(err)
				}
			}
			insert(o.ID, p.ID, oldest-1)
			insert(o.ID, p.ID, oldest)
			insert(other.ID, op.ID, oldest-1)
			// A match older than the days kept is not counted.
			if err := db.gorm.Exec("UPDATE matches SET created_us = ? WHERE id = ?", (oldest-1)*86_400_000_000, ms[2].ID).Error; err != nil {
				t.Fatal(err)
			}
			var updates []ports.ScoreUpdate
			for _, m := range ms {
				updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 95, Intent: core.IntentBuying}})
			}
			if got, err := NewMatchStore(db).SetScores(ctx, updates, nil); err != nil || len(got) != 3 {
				t.Fatalf("SetScores: %d, %v", len(got), err)
			}
			days := func(ownerID string) map[int64]int64 {
				got, err := NewTrendStore(db).DayCounts(ctx, ownerID, "", oldest-10, oldest+core.TrendKeepDays)
				if err != nil {
					t.Fatal(err)
				}
				out := map[int64]int64{}
				for _, c := range got {
					out[c.Day] += c.N
				}
				return out
			}
			today := core.DayOf(ms[0].CreatedAt)
			if got, want := days(o.ID), map[int64]int64{oldest: 7, today: 2}; !reflect.DeepEqual(got, want) {
				t.Fatalf("the owner's counts by day: %v, want %v", got, want)
			}
			if got, want := days(other.ID), map[int64]int64{oldest - 1: 7}; !reflect.DeepEqual(got, want) {
				t.Fatalf("another owner's counts by day: %v, want %v", got, want)
			}
		})
	}
}

// A database that had scored matches before it kept counts (schema 23)
// gets them on the upgrade: the matches scored within the days kept,
// none unscored, none older.
func TestDayCountsFilledOnUpgrade(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			// At the latest schema the matches are made by today's code;
			// scored in place below, as the build before stored scores,
			// they are in no count until the step's fill runs again.
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			o, p, ms := trendFixture(t, db, 6)
			// Scored as the build before stored scores: in the matches only.
			score := func(m core.Match, v int, intent any, createdUs int64) {
				t.Helper()
				if err := db.gorm.Exec("UPDATE matches SET score = ?, intent = ?, reason = '', created_us = ? WHERE id = ?", v, intent, createdUs, m.ID).Error; err != nil {
					t.Fatal(err)
				}
			}
			today := core.DayOf(time.Now())
			us := func(day int64) int64 { return day*86_400_000_000 + 3_600_000_000 }
			score(ms[0], 100, "buying", us(today))
			score(ms[1], 91, "buying", us(today)+1) // an owner's matches have distinct times
			score(ms[2], 5, nil, us(today-3))
			score(ms[3], 42, "question", us(today-core.TrendKeepDays+1))
			score(ms[4], 42, "question", us(today-core.TrendKeepDays-5)) // too old to count
			// ms[5] is unscored.
			if err := RefillTrends(db); err != nil {
				t.Fatal(err)
			}
			got, err := NewTrendStore(db).DayCounts(ctx, o.ID, p.ID, today-2*core.TrendKeepDays, today)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b core.DayCount) int { return int(a.Day - b.Day) })
			want := []core.DayCount{
				{Day: today - core.TrendKeepDays + 1, Platform: core.X, Intent: core.IntentQuestion, Band: 4, N: 1},
				{Day: today - 3, Platform: core.X, Intent: "", Band: 0, N: 1},
				{Day: today, Platform: core.X, Intent: core.IntentBuying, Band: 9, N: 2},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("counts after the upgrade\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
