package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// wantCounts adds the scored matches up as the counts must hold them:
// by day, platform, intent and band. phraseID, when not empty, keeps
// that phrase's only.
func wantCounts(scored map[string]core.Match, phraseID string) []core.DayCount {
	sum := map[core.DayCount]int64{}
	for _, m := range scored {
		if phraseID != "" && m.PhraseID != phraseID {
			continue
		}
		k := core.DayCount{Day: core.DayOf(m.CreatedAt), Platform: m.Platform, Intent: m.Score.Intent, Band: core.ScoreBand(m.Score.Value)}
		sum[k]++
	}
	var out []core.DayCount
	for k, n := range sum {
		k.N = n
		out = append(out, k)
	}
	return sortCounts(out)
}

func sortCounts(cs []core.DayCount) []core.DayCount {
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b core.DayCount) int {
		switch {
		case a.Day != b.Day:
			return int(a.Day - b.Day)
		case a.Platform != b.Platform:
			return compare(string(a.Platform), string(b.Platform))
		case a.Intent != b.Intent:
			return compare(string(a.Intent), string(b.Intent))
		}
		return a.Band - b.Band
	})
	return cs
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dayCounts reads the owner's counts of the days around now, sorted.
func dayCounts(t *testing.T, tr ports.TrendStore, ownerID, phraseID string) []core.DayCount {
	t.Helper()
	today := core.DayOf(time.Now())
	got, err := tr.DayCounts(ctx, ownerID, phraseID, today-core.MaxTrendDays, today+1)
	if err != nil {
		t.Fatalf("DayCounts: %v", err)
	}
	return sortCounts(got)
}

func sameCounts(t *testing.T, what string, got, want []core.DayCount) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: counts\n%+v\nwant\n%+v", what, got, want)
	}
}

// verdict is the score of the i-th match of a case: every band and
// intent comes up.
func verdict(i int) core.Score {
	return core.Score{Value: (i * 37) % 101, Intent: core.Intents[i%len(core.Intents)], Reason: "because"}
}

// testTrendCounts: the counts hold every match once its first score is
// stored, by the day it was created, its platform, intent and band;
// summed over phrases or of one; never another owner's, never an
// unscored match, and a deleted phrase's leave with it.
func testTrendCounts(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	px := newPhrase(t, s, o.ID, "trend "+unique(), "x", "")
	pr := newPhrase(t, s, o.ID, "trend "+unique(), "reddit", "trends")
	pf := newPhrase(t, s, o.ID, "trend "+unique(), "facebook", "")
	theirs := newPhrase(t, s, other.ID, "trend "+unique(), "x", "")
	if got := dayCounts(t, s.Trends, o.ID, ""); len(got) != 0 {
		t.Fatalf("a new owner has counts: %+v", got)
	}
	ms := append(append(saveMatches(t, s, o.ID, px, 40), saveMatches(t, s, o.ID, pr, 25)...), saveMatches(t, s, o.ID, pf, 5)...)
	saveMatches(t, s, other.ID, theirs, 3) // unscored: counted nowhere
	scored := map[string]core.Match{}
	var updates []ports.ScoreUpdate
	for i, m := range ms[:60] { // ten left unscored
		updates = append(updates, ports.ScoreUpdate{Match: core.Match{OwnerID: m.OwnerID, ID: m.ID}, Score: verdict(i)})
		m.Score = new(verdict(i))
		scored[m.ID] = m
	}
	// Two batches, as the sweep stores them.
	for _, batch := range [][]ports.ScoreUpdate{updates[:17], updates[17:]} {
		if got, err := s.Matches.SetScores(ctx, batch, nil); err != nil || len(got) != len(batch) {
			t.Fatalf("SetScores: %d scored, %v", len(got), err)
		}
	}
	sameCounts(t, "all phrases", dayCounts(t, s.Trends, o.ID, ""), wantCounts(scored, ""))
	sameCounts(t, "the reddit phrase", dayCounts(t, s.Trends, o.ID, pr.ID), wantCounts(scored, pr.ID))
	if got := dayCounts(t, s.Trends, other.ID, ""); len(got) != 0 {
		t.Fatalf("the other owner's unscored matches are counted: %+v", got)
	}
	if got := dayCounts(t, s.Trends, other.ID, px.ID); len(got) != 0 {
		t.Fatalf("another owner reads the owner's phrase: %+v", got)
	}
	if got := dayCounts(t, s.Trends, o.ID, theirs.ID); len(got) != 0 {
		t.Fatalf("the owner reads another owner's phrase: %+v", got)
	}
	// The span's ends are both included; days outside it are left out.
	m := ms[0]
	day := core.DayOf(m.CreatedAt)
	for _, tc := range []struct {
		from, to int64
		want     bool
	}{{day, day, true}, {day - 5, day, true}, {day, day + 5, true}, {day + 1, day + 5, false}, {day - 5, day - 1, false}} {
		got, err := s.Trends.DayCounts(ctx, o.ID, px.ID, tc.from, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(got, func(c core.DayCount) bool { return c.Day == day })
		if has != tc.want || slices.ContainsFunc(got, func(c core.DayCount) bool { return c.Day < tc.from || c.Day > tc.to }) {
			t.Fatalf("days %d to %d (the match's %d): %+v", tc.from, tc.to, day, got)
		}
	}
	// Deleting a phrase takes its counts, as it takes its matches.
	if err := s.Phrases.DeletePhrase(ctx, o.ID, pr.ID); err != nil {
		t.Fatal(err)
	}
	for id, m := range scored {
		if m.PhraseID == pr.ID {
			delete(scored, id)
		}
	}
	sameCounts(t, "after deleting a phrase", dayCounts(t, s.Trends, o.ID, ""), wantCounts(scored, ""))
	if got := dayCounts(t, s.Trends, o.ID, pr.ID); len(got) != 0 {
		t.Fatalf("the deleted phrase's counts stay: %+v", got)
	}
}

// testTrendCountedOnce: a match counts once however often a score is
// stored for it: again later, twice in one batch, and from concurrent
// batches naming the same matches.
func testTrendCountedOnce(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "once "+unique(), "x", "")
	ms := saveMatches(t, s, o.ID, p, 30)
	scored := map[string]core.Match{}
	var updates []ports.ScoreUpdate
	for i, m := range ms {
		updates = append(updates, ports.ScoreUpdate{Match: m, Score: verdict(i)})
		m.Score = new(verdict(i))
		scored[m.ID] = m
	}
	// The first ten, each named twice in one batch: the first verdict counts.
	twice := slices.Clone(updates[:10])
	for _, u := range updates[:10] {
		u.Score = core.Score{Value: 100 - u.Score.Value, Intent: core.IntentPromotion}
		twice = append(twice, u)
	}
	if got, err := s.Matches.SetScores(ctx, twice, core.QueueMatchCreated); err != nil || len(got) != 10 {
		t.Fatalf("SetScores: %d scored, %v", len(got), err)
	}
	// All thirty from four batches at once: the twenty left count once.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Matches.SetScores(ctx, updates, core.QueueMatchCreated); err != nil {
				t.Errorf("SetScores: %v", err)
			}
		}()
	}
	wg.Wait()
	// And once more, later.
	if got, err := s.Matches.SetScores(ctx, updates, nil); err != nil || len(got) != 0 {
		t.Fatalf("SetScores again: %d scored, %v", len(got), err)
	}
	got := dayCounts(t, s.Trends, o.ID, "")
	sameCounts(t, "scores stored several times", got, wantCounts(scored, ""))
	var n int64
	for _, c := range got {
		n += c.N
	}
	if n != int64(len(ms)) {
		t.Fatalf("%d counted, want %d", n, len(ms))
	}
}

// testTrendFill: a backend that fills its counts from the matches
// stored before it kept them (a schema upgrade) fills them as storing
// the scores did, for every owner.
func testTrendFill(t *testing.T, s Stores) {
	if s.RefillTrends == nil {
		t.Skip("the backend has no step that fills the counts")
	}
	fresh, refill := s.RefillTrends(t)
	owners := make([]core.Owner, 3)
	want := map[string][]core.DayCount{}
	for k := range owners {
		o := newOwner(t, fresh)
		owners[k] = o
		scored := map[string]core.Match{}
		for j, platform := range []string{"x", "facebook"}[:1+k%2] {
			p := newPhrase(t, fresh, o.ID, fmt.Sprint("fill ", j), platform, "")
			ms := saveMatches(t, fresh, o.ID, p, 20+k)
			var updates []ports.ScoreUpdate
			for i, m := range ms[:len(ms)-3] {
				sc := verdict(i + k)
				if i%5 == 0 {
					sc.Intent = "" // a verdict with no intent
				}
				updates = append(updates, ports.ScoreUpdate{Match: m, Score: sc})
				m.Score = &sc
				scored[m.ID] = m
			}
			if _, err := fresh.Matches.SetScores(ctx, updates, nil); err != nil {
				t.Fatal(err)
			}
		}
		want[o.ID] = wantCounts(scored, "")
		sameCounts(t, "counts kept", dayCounts(t, fresh.Trends, o.ID, ""), want[o.ID])
	}
	if err := refill(); err != nil {
		t.Fatalf("refilling the counts: %v", err)
	}
	for _, o := range owners {
		sameCounts(t, "counts filled from the matches", dayCounts(t, fresh.Trends, o.ID, ""), want[o.ID])
	}
}
