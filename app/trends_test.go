package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// The trends span the days that end on the clock's UTC day, move with
// it, read one phrase or all of the owner's, and refuse a span other
// than 30 or 90 days and a phrase that is not the owner's.
func TestTrendsOnAClock(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	clock := &handClock{now: time.Date(2026, 3, 31, 23, 30, 0, 0, time.UTC)}
	svc := NewTrends(gormstore.NewTrendStore(w.db), w.phrases, clock)
	o, err := w.owners.Create(ctx, "trends@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := w.owners.Create(ctx, "other-trends@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	phrases := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 5}, clock)
	px, _, err := phrases.Add(ctx, o.ID, "acme", "x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	pr, _, err := phrases.Add(ctx, o.ID, "acme", "reddit", "saas", "")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := phrases.Add(ctx, other.ID, "acme", "x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Counts as the match store keeps them, on days around the clock's.
	today := core.DayOf(clock.Now())
	count := func(p core.Phrase, day int64, intent core.Intent, band, n int) {
		t.Helper()
		if _, err := w.db.SQL().Exec(fmt.Sprintf("INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, band%d) VALUES (?, ?, ?, ?, ?, ?)", band),
			p.OwnerID, day, string(p.Platform), string(intent), p.ID, n); err != nil {
			t.Fatal(err)
		}
	}
	count(px, today, core.IntentBuying, 9, 4)
	count(pr, today, core.IntentBuying, 9, 1)
	count(px, today-29, core.IntentQuestion, 3, 2) // the first of 30 days
	count(pr, today-30, core.IntentQuestion, 3, 8) // the day before them
	count(pr, today-89, core.IntentPraise, 7, 16)  // the first of 90 days
	count(theirs, today, core.IntentBuying, 9, 32)

	tr, err := svc.Trends(ctx, o.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Days != 30 || tr.Total != 7 || !tr.First.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) ||
		tr.PerDay[29] != 5 || tr.PerDay[0] != 2 || tr.Bands[9] != 5 || tr.Bands[3] != 2 {
		t.Fatalf("30 days of all phrases: %+v", tr)
	}
	if x, reddit := tr.ByPlatform[1], tr.ByPlatform[0]; x.Key != "x" || x.Total != 6 || reddit.Key != "reddit" || reddit.Total != 1 {
		t.Fatalf("by platform: %+v", tr.ByPlatform)
	}
	tr, err = svc.Trends(ctx, o.ID, "", 90)
	if err != nil || tr.Days != 90 || tr.Total != 31 || tr.PerDay[0] != 16 || tr.Bands[7] != 16 {
		t.Fatalf("90 days: %+v, %v", tr, err)
	}
	tr, err = svc.Trends(ctx, o.ID, pr.ID, 90)
	if err != nil || tr.PhraseID != pr.ID || tr.Total != 25 || tr.ByPlatform[1].Total != 0 {
		t.Fatalf("90 days of the reddit phrase: %+v, %v", tr, err)
	}

	// Half an hour later it is another day: what was the first of the 30
	// days is behind, and today has nothing yet.
	clock.add(30 * time.Minute)
	tr, err = svc.Trends(ctx, o.ID, "", 30)
	if err != nil || tr.Total != 5 || tr.PerDay[29] != 0 || tr.PerDay[28] != 5 ||
		!tr.First.Equal(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the next day: %+v, %v", tr, err)
	}

	for _, days := range []int{1, 7, 31, 60, 365, -30} {
		if _, err := svc.Trends(ctx, o.ID, "", days); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("days %d: %v", days, err)
		}
	}
	for _, id := range []string{theirs.ID, "no-such-phrase", "\x00"} {
		if _, err := svc.Trends(ctx, o.ID, id, 30); !core.IsKind(err, core.KindNotFound) {
			t.Errorf("phrase %q: %v", id, err)
		}
	}
}

// Matches scored through the match store show in the trends of the
// system clock's day, once each.
func TestTrendsOfScoredMatches(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	o, err := w.owners.Create(ctx, "scored-trends@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 1}, ports.SystemClock{}).Add(ctx, o.ID, "acme", "x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var batch []ports.PostMatches
	for i := range 12 {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: string(rune('a' + i)), Text: "acme"}, PhraseIDs: []string{p.ID}})
	}
	res, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	var updates []ports.ScoreUpdate
	for i, m := range res.Matches[:10] {
		updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 10 * i, Intent: core.IntentQuestion}})
	}
	for range 2 {
		if _, err := w.matches.SetScores(ctx, updates, nil); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := NewTrends(gormstore.NewTrendStore(w.db), w.phrases, nil).Trends(ctx, o.ID, p.ID, 30)
	if err != nil {
		t.Fatal(err)
	}
	// The matches were made a moment ago: today, unless midnight UTC has
	// passed since, when they are yesterday's.
	if tr.Total != 10 || tr.PerDay[29]+tr.PerDay[28] != 10 || tr.Bands != [core.ScoreBands]int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1} {
		t.Fatalf("trends of 10 scored matches: %+v", tr)
	}
}
