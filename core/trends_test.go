package core

import (
	"testing"
	"time"
)

func TestScoreBand(t *testing.T) {
	for _, tc := range []struct{ score, band int }{
		{0, 0}, {9, 0}, {10, 1}, {55, 5}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {-3, 0}, {250, 9},
	} {
		if got := ScoreBand(tc.score); got != tc.band {
			t.Errorf("ScoreBand(%d) = %d, want %d", tc.score, got, tc.band)
		}
	}
	for b, want := range [][2]int{{0, 9}, {10, 19}, {80, 89}, {90, 100}} {
		band := []int{0, 1, 8, 9}[b]
		if lo, hi := BandRange(band); lo != want[0] || hi != want[1] {
			t.Errorf("BandRange(%d) = %d-%d, want %d-%d", band, lo, hi, want[0], want[1])
		}
	}
}

func TestDayOf(t *testing.T) {
	for _, tc := range []struct {
		at  time.Time
		day int64
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1970, 1, 1, 23, 59, 59, 999999000, time.UTC), 0},
		{time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC), 1},
		{time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), -1},
		// A day is UTC's, whatever zone the time is given in.
		{time.Date(2025, 3, 1, 23, 30, 0, 0, time.FixedZone("", -2*3600)), DayOf(time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC))},
	} {
		if got := DayOf(tc.at); got != tc.day {
			t.Errorf("DayOf(%v) = %d, want %d", tc.at, got, tc.day)
		}
		if start := DayStart(tc.day); DayOf(start) != tc.day || start.Hour() != 0 || start.Location() != time.UTC {
			t.Errorf("DayStart(%d) = %v", tc.day, start)
		}
	}
}

func TestCheckTrendDays(t *testing.T) {
	for days, want := range map[int]int{0: 30, 30: 30, 90: 90} {
		if got, err := CheckTrendDays(days); err != nil || got != want {
			t.Errorf("CheckTrendDays(%d) = %d, %v; want %d", days, got, err, want)
		}
	}
	for _, days := range []int{-30, 1, 7, 29, 31, 60, 91, 365} {
		if _, err := CheckTrendDays(days); !IsKind(err, KindInvalid) || Message(err) != "days must be 30 or 90" {
			t.Errorf("CheckTrendDays(%d): %v", days, err)
		}
	}
}

func TestBuildTrends(t *testing.T) {
	now := time.Date(2025, 3, 31, 15, 0, 0, 0, time.UTC)
	today := DayOf(now)
	counts := []DayCount{
		{Day: today, Platform: Reddit, Intent: IntentBuying, Band: 9, N: 3},
		{Day: today, Platform: X, Intent: IntentBuying, Band: 9, N: 2},
		{Day: today - 29, Platform: X, Intent: IntentQuestion, Band: 4, N: 5},
		{Day: today - 30, Platform: X, Intent: IntentQuestion, Band: 4, N: 100}, // before the span
		{Day: today + 1, Platform: X, Intent: IntentQuestion, Band: 4, N: 100},  // after it
		{Day: today - 1, Platform: Facebook, Intent: "", Band: 0, N: 1},
		{Day: today - 1, Platform: Facebook, Intent: "sarcasm", Band: 0, N: 1},
		{Day: today - 2, Platform: X, Intent: IntentPraise, Band: 5, N: 0},
	}
	tr := BuildTrends("p1", 30, now, counts)
	if tr.PhraseID != "p1" || tr.Days != 30 || !tr.First.Equal(time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)) ||
		!tr.Date(29).Equal(time.Date(2025, 3, 31, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("span: %+v first %v", tr, tr.First)
	}
	if tr.Total != 12 || len(tr.PerDay) != 30 || tr.PerDay[29] != 5 || tr.PerDay[0] != 5 || tr.PerDay[28] != 2 {
		t.Fatalf("totals %d, per day %v", tr.Total, tr.PerDay)
	}
	want := map[string]int64{"reddit": 3, "x": 7, "facebook": 2}
	if len(tr.ByPlatform) != len(Platforms) {
		t.Fatalf("platforms %+v", tr.ByPlatform)
	}
	for i, s := range tr.ByPlatform {
		if s.Key != string(Platforms[i]) || s.Total != want[s.Key] || len(s.PerDay) != 30 {
			t.Errorf("platform series %+v, want total %d", s, want[s.Key])
		}
	}
	if x := tr.ByPlatform[1]; x.PerDay[29] != 2 || x.PerDay[0] != 5 {
		t.Errorf("x per day %v", x.PerDay)
	}
	wantIntent := map[string]int64{"buying": 5, "question": 5, "other": 2}
	if len(tr.ByIntent) != len(Intents)+1 || tr.ByIntent[len(Intents)].Key != "other" {
		t.Fatalf("intents %+v", tr.ByIntent)
	}
	for _, s := range tr.ByIntent {
		if s.Total != wantIntent[s.Key] {
			t.Errorf("intent %s: total %d, want %d", s.Key, s.Total, wantIntent[s.Key])
		}
	}
	if tr.Bands != [ScoreBands]int64{0: 2, 4: 5, 9: 5} {
		t.Errorf("bands %v", tr.Bands)
	}

	// No counts: every series there, every number zero; no "other".
	empty := BuildTrends("", 90, now, nil)
	if empty.Total != 0 || len(empty.PerDay) != 90 || len(empty.ByPlatform) != 3 || len(empty.ByIntent) != len(Intents) ||
		!empty.First.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("empty trends %+v", empty)
	}
}
