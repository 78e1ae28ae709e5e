package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
)

// Sweeps an hour apart by the ticker still read the clock a little later
// or earlier each time (the goroutine's wake-up, the read of the owners
// before the clock): one that starts a few milliseconds earlier in its
// hour than the last did must still mail an hourly owner, not leave the
// digest to the sweep after, two hours after the last.
func TestHourlyDigestWhenASweepStartsEarlierInItsHour(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		start := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
		clock := &handClock{now: start}
		box := &alertBox{}
		store := gormstore.NewAlertStore(w.db)
		alerts := alertService(w, store, box, clock)
		o := hourlyOwner(t, w, store, "jitter@example.com")
		for i, at := range []time.Time{start, start.Add(time.Hour + 40*time.Millisecond), start.Add(2*time.Hour + 15*time.Millisecond)} {
			scoredMatches(t, w, o, slices.Repeat([]int{90}, i+1)...) // a new phrase each time
			clock.mu.Lock()
			clock.now = at
			clock.mu.Unlock()
			if n, err := alerts.Sweep(ctx); err != nil || n != 1 {
				t.Fatalf("sweep %d at %v: %d emails, %v; want 1", i, at, n, err)
			}
			if got := box.take(o.Email); len(got) != 1 {
				t.Fatalf("sweep %d: %d emails", i, len(got))
			}
		}
	})
}
