package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// With sweeps an hour apart (the default EARSHOT_ALERT_INTERVAL), one
// may read the clock a moment before the owner's hour and the next a
// moment after the hour is over: no sweep fell within it, though none
// was missed. The sweep just after counts as the hour's, so the digest
// of an owner never emailed, and the matches that came within the hour,
// are not put off to the next day.
func TestDailyDigestWhenNoSweepReadTheClockWithinTheHour(t *testing.T) {
	t.Parallel()
	at := func(d, h, m, s, ms int) time.Time {
		return time.Date(2026, 1, d, h, m, s, ms*int(time.Millisecond), time.UTC)
	}
	daily := core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}
	for _, c := range []struct {
		name    string
		last    time.Time // the owner's last alert email
		created time.Time // the match waiting
	}{
		{"never emailed", time.Time{}, at(10, 8, 0, 0, 0)},
		{"a match within the hour", at(9, 9, 0, 0, 10), at(10, 9, 30, 0, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := &handClock{}
			store := &memAlerts{owner: core.Owner{ID: "o1", Email: "daily@example.com"}, sched: daily, last: c.last}
			box := &alertBox{}
			alerts := NewAlerts(AlertDeps{Store: store, Leases: freeLeases{}, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
				AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
			store.add("m1", c.created)
			sent := 0
			for _, now := range []time.Time{at(10, 8, 59, 59, 990), at(10, 10, 0, 0, 20)} {
				if now.After(c.created) {
					clock.now = now
					if _, err := alerts.Sweep(context.Background()); err != nil {
						t.Fatal(err)
					}
					sent += len(box.take("daily@example.com"))
				}
			}
			if sent != 1 {
				t.Fatalf("%d digests from the sweeps around 10 Jan's 09:00, want 1", sent)
			}
		})
	}
}
