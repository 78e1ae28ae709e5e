package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// Exported functions an embedder may call with values of its own:
// out-of-range ones get an answer, not a panic.

func TestBuildTrendsNegativeDays(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	counts := []core.DayCount{{Day: core.DayOf(now), Platform: core.Reddit, Intent: core.IntentBuying, Band: 9, N: 1}}
	got := core.BuildTrends("", -1, now, counts)
	if got.Days != 0 || len(got.PerDay) != 0 || got.Total != 0 {
		t.Errorf("BuildTrends(days -1) = days %d, %d days counted, total %d; want an empty span", got.Days, len(got.PerDay), got.Total)
	}
}

func TestNextDeliveryStepHighestTries(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	got := core.NextDeliveryStep(math.MaxInt, core.DefaultRetrySchedule, false, at, 0)
	if got.Status != core.DeliveryFailed || got.Tries != math.MaxInt {
		t.Errorf("NextDeliveryStep(MaxInt tries) = %+v, want failed at %d tries", got, math.MaxInt)
	}
}
