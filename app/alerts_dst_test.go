package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A daily owner in a zone whose clocks change gets one digest a local
// day across the change, with sweeps an hour apart at any minute of the
// hour and a match every three hours: the hour 01:00 that comes twice
// when the clocks go back mails once, and the hour 02:00 they skip in
// spring mails at the change.
func TestDailyDigestOnceADayAcrossClockChanges(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hour   int
		change time.Time
	}{
		{1, time.Date(2026, 11, 1, 0, 0, 0, 0, ny)},
		{2, time.Date(2026, 11, 1, 0, 0, 0, 0, ny)},
		{2, time.Date(2026, 3, 8, 0, 0, 0, 0, ny)},
		{3, time.Date(2026, 3, 8, 0, 0, 0, 0, ny)},
	} {
		for _, phase := range []time.Duration{0, 10 * time.Millisecond, 17 * time.Minute, 59*time.Minute + 59*time.Second} {
			t.Run(fmt.Sprintf("%s hour %d phase %v", c.change.Format(time.DateOnly), c.hour, phase), func(t *testing.T) {
				t.Parallel()
				clock := &handClock{}
				store := &memAlerts{owner: core.Owner{ID: "o1", Email: "dst@example.com"},
					sched: core.AlertSchedule{Frequency: core.AlertDaily, Hour: c.hour, Zone: "America/New_York"}}
				box := &alertBox{}
				alerts := NewAlerts(AlertDeps{Store: store, Leases: freeLeases{}, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
					AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
				from, to := c.change.AddDate(0, 0, -1), c.change.AddDate(0, 0, 2)
				days := map[string][]time.Time{}
				next := from.Add(-2 * time.Hour)
				for at := from.Add(phase); at.Before(to); at = at.Add(time.Hour) {
					for ; !next.After(at); next = next.Add(3 * time.Hour) {
						store.add(next.Format(time.RFC3339), next)
					}
					clock.now = at
					if _, err := alerts.Sweep(context.Background()); err != nil {
						t.Fatal(err)
					}
					if len(box.take("dst@example.com")) > 0 {
						day := at.In(ny).Format(time.DateOnly)
						days[day] = append(days[day], at)
					}
				}
				for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
					if got := days[d.Format(time.DateOnly)]; len(got) != 1 {
						t.Errorf("%s: digests at %v, want one", d.Format(time.DateOnly), got)
					}
				}
			})
		}
	}
}
