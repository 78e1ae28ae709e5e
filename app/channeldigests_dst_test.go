package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A daily channel in a zone whose clocks change queues one digest a
// local day across the change, sweeping every five minutes with a match
// scored every three hours: on the day the clocks go back, the chosen
// hour 01:00 comes twice and sends once; on the day they skip it (02:00
// in spring), the digest goes at the change. The days are ahead of the
// system clock, which stamps the channel's creation.
func TestChannelDailyDigestOnceADayAcrossClockChanges(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		hour   int
		change time.Time // the local day of the change
	}{
		{"back, hour repeated", 1, time.Date(2027, 11, 7, 0, 0, 0, 0, ny)},
		{"back, hour after", 2, time.Date(2027, 11, 7, 0, 0, 0, 0, ny)},
		{"forward, hour skipped", 2, time.Date(2027, 3, 14, 0, 0, 0, 0, ny)},
		{"forward, hour after", 3, time.Date(2027, 3, 14, 0, 0, 0, 0, ny)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorld(t)
			o := w.owner(t, "dst@example.com")
			ch := newChans(t, w, nil)
			in := ch.fake.newTarget(core.ChannelSlack)
			zero := 0
			in.MinScore, in.Frequency, in.Hour, in.Zone = &zero, "daily", c.hour, "America/New_York"
			if _, err := ch.Create(ctx, o.ID, in); err != nil {
				t.Fatal(err)
			}
			from := c.change.AddDate(0, 0, -1)
			to := c.change.AddDate(0, 0, 2)
			for at := from.Add(-2 * time.Hour); at.Before(to); at = at.Add(3 * time.Hour) {
				ch.scoreAt(t, o.ID, "scored at "+at.Format(time.RFC3339), at)
			}
			days := map[string][]time.Time{}
			for at := from; at.Before(to); at = at.Add(5 * time.Minute) {
				ch.clock.now = at
				n, err := ch.digests.Sweep(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					day := at.In(ny).Format(time.DateOnly)
					days[day] = append(days[day], at)
				}
			}
			for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
				day := d.Format(time.DateOnly)
				if got := days[day]; len(got) != 1 {
					t.Errorf("%s: digests queued at %v, want one", day, got)
				}
			}
		})
	}
}
