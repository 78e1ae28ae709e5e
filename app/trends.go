package app

import (
	"context"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Trends reads how an owner's matches went over the last 30 or 90 days:
// per day by platform and by intent, and the spread of their scores,
// from the daily counts the match store keeps (never from the matches).
type Trends struct {
	counts  ports.TrendStore
	phrases ports.PhraseStore
	clock   ports.Clock
}

// NewTrends returns the trends service. A nil clock is the system's.
func NewTrends(counts ports.TrendStore, phrases ports.PhraseStore, clock ports.Clock) *Trends {
	if clock == nil {
		clock = ports.SystemClock{}
	}
	return &Trends{counts: counts, phrases: phrases, clock: clock}
}

// Trends returns the owner's trends over the days days ending today
// (UTC), of every phrase or of phraseID alone. days is 30 or 90, 0
// meaning 30: anything else is KindInvalid naming days. A phraseID that
// is not one of the owner's phrases is KindNotFound.
func (s *Trends) Trends(ctx context.Context, ownerID, phraseID string, days int) (core.Trends, error) {
	days, err := core.CheckTrendDays(days)
	if err != nil {
		return core.Trends{}, err
	}
	if phraseID != "" {
		if _, err := s.phrases.Phrase(ctx, ownerID, phraseID); err != nil {
			return core.Trends{}, err
		}
	}
	now := s.clock.Now()
	today := core.DayOf(now)
	counts, err := s.counts.DayCounts(ctx, ownerID, phraseID, today-int64(days)+1, today)
	if err != nil {
		return core.Trends{}, err
	}
	return core.BuildTrends(phraseID, days, now, counts), nil
}
