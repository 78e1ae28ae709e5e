package core

import (
	"slices"
	"time"
)

// The spans, in days, the trends of an owner's matches are read over.
const (
	DefaultTrendDays = 30
	MaxTrendDays     = 90
)

// TrendKeepDays is how many days of daily counts a store keeps: the
// longest span and a margin, so a view read across midnight UTC, or
// with a clock a little behind the database's, still finds its first
// day. Older counts are trimmed.
const TrendKeepDays = MaxTrendDays + 10

// ScoreBands is how many bands a score falls in: 0-9, 10-19, ..., 80-89
// and 90-100.
const ScoreBands = 10

// ScoreBand returns the band of a score: its tens, with 100 in the top
// band and anything out of range in the nearest one.
func ScoreBand(v int) int { return min(max(v/10, 0), ScoreBands-1) }

// BandRange returns the lowest and highest score of band b.
func BandRange(b int) (lo, hi int) {
	if b == ScoreBands-1 {
		return 10 * b, 100
	}
	return 10 * b, 10*b + 9
}

// microsPerDay is one day in microseconds, the unit of stored times.
const microsPerDay = 24 * 60 * 60 * 1_000_000

// DayOf returns the UTC calendar day of t, counted from 1 January 1970
// (day 0).
func DayOf(t time.Time) int64 {
	us := t.UnixMicro()
	d := us / microsPerDay
	if us%microsPerDay < 0 {
		d-- // floor, for times before 1970
	}
	return d
}

// DayStart returns midnight UTC at the start of day d.
func DayStart(d int64) time.Time { return time.UnixMicro(d * microsPerDay).UTC() }

// CheckTrendDays checks the span of a trends request: 0 means
// DefaultTrendDays; anything but 30 or 90 is KindInvalid naming days.
func CheckTrendDays(days int) (int, error) {
	switch days {
	case 0:
		return DefaultTrendDays, nil
	case DefaultTrendDays, MaxTrendDays:
		return days, nil
	}
	return 0, Errorf(KindInvalid, "days must be %d or %d", DefaultTrendDays, MaxTrendDays)
}

// DayCount is one row of the daily counts: how many of an owner's
// matches created on Day (DayOf) were scored on Platform with Intent in
// Band (ScoreBand). The counts a store returns are summed over phrases.
type DayCount struct {
	Day      int64
	Platform Platform
	Intent   Intent
	Band     int
	N        int64
}

// IntentOther names, in the trends, the matches scored with no intent
// or one that is not among Intents.
const IntentOther Intent = "other"

// TrendSeries is one line of a chart: a platform's or an intent's
// matches on each day of the span, and their sum.
type TrendSeries struct {
	Key    string // the platform or the intent
	PerDay []int64
	Total  int64
}

// Trends are an owner's scored matches over the last Days days (today,
// UTC, the last of them): per day by platform and by intent, and how
// their scores spread over the bands.
type Trends struct {
	PhraseID string    // the phrase counted; empty for all of them
	Days     int       // 30 or 90
	First    time.Time // midnight UTC at the start of the first day
	PerDay   []int64   // every match of each day
	// ByPlatform has every platform, in the order of Platforms.
	ByPlatform []TrendSeries
	// ByIntent has every intent, in the order of Intents, then
	// IntentOther when some match counts under it.
	ByIntent []TrendSeries
	Bands    [ScoreBands]int64 // matches by score band, over the span
	Total    int64
}

// Date returns the day i of the span (0 the first) at midnight UTC.
func (t Trends) Date(i int) time.Time { return t.First.AddDate(0, 0, i) }

// BuildTrends sums counts into the trends of phraseID ("" for all) over
// the days days that end on the UTC day of now. Counts outside the span
// are left out. days is meant to come from CheckTrendDays; a negative
// one is an empty span, and the span's slices grow with days.
func BuildTrends(phraseID string, days int, now time.Time, counts []DayCount) Trends {
	days = max(days, 0)
	first := DayOf(now) - int64(days) + 1
	t := Trends{PhraseID: phraseID, Days: days, First: DayStart(first), PerDay: make([]int64, days)}
	series := func(keys []string) []TrendSeries {
		out := make([]TrendSeries, len(keys))
		for i, k := range keys {
			out[i] = TrendSeries{Key: k, PerDay: make([]int64, days)}
		}
		return out
	}
	var platforms, intents []string
	for _, p := range Platforms {
		platforms = append(platforms, string(p))
	}
	for _, i := range Intents {
		intents = append(intents, string(i))
	}
	t.ByPlatform = series(platforms)
	t.ByIntent = series(append(intents, string(IntentOther)))
	for _, c := range counts {
		i := c.Day - first
		if i < 0 || i >= int64(days) || c.N <= 0 {
			continue
		}
		t.PerDay[i] += c.N
		t.Total += c.N
		t.Bands[ScoreBand(10*c.Band)] += c.N
		add(t.ByPlatform, slices.Index(platforms, string(c.Platform)), i, c.N)
		k := slices.Index(intents, string(c.Intent))
		if k < 0 {
			k = len(intents)
		}
		add(t.ByIntent, k, i, c.N)
	}
	if last := t.ByIntent[len(intents)]; last.Total == 0 {
		t.ByIntent = t.ByIntent[:len(intents)]
	}
	return t
}

// add counts n on day i of series k; k < 0 (a platform this build does
// not know) counts nowhere but the day's total.
func add(s []TrendSeries, k int, i, n int64) {
	if k < 0 {
		return
	}
	s[k].PerDay[i] += n
	s[k].Total += n
}
