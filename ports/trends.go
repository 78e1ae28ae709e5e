package ports

import (
	"context"

	"github.com/earshothq/earshot/core"
)

// TrendStore reads the daily counts of scored matches that the match
// store keeps as it stores scores (MatchStore.SetScores): each match is
// counted once, on the UTC day it was created, from the moment its
// first score is stored, and leaves the counts with its phrase. Counts
// are kept for core.TrendKeepDays days at least. It is safe for
// concurrent use.
type TrendStore interface {
	// DayCounts returns the owner's counts of the days from and to
	// (core.DayOf; both included), summed over the owner's phrases, or
	// those of phraseID alone when it is not empty, one DayCount per
	// day, platform, intent and band that has any. An unknown owner or
	// phrase, or another owner's phrase, has none.
	DayCounts(ctx context.Context, ownerID, phraseID string, from, to int64) ([]core.DayCount, error)
}
