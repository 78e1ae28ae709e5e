package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/ports"
)

// signalBox is an alertBox that says when a mail came.
type signalBox struct {
	alertBox
	got chan struct{}
}

func (b *signalBox) Send(ctx context.Context, m ports.Mail) error {
	err := b.alertBox.Send(ctx, m)
	select {
	case b.got <- struct{}{}:
	default:
	}
	return err
}

// The alert loop sweeps as it starts, not one interval later: with the
// default interval of an hour, a service restarted more often than
// hourly (deploys, a crash loop) would otherwise never mail anyone, and
// each restart would hold the pending alerts back up to an hour.
func TestAlertsSweepAtStart(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		clock := &handClock{now: time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)}
		o := w.owner(t, "start@example.com")
		scoredMatches(t, w, o, 90)
		box := &signalBox{got: make(chan struct{}, 1)}
		alerts := NewAlerts(AlertDeps{Store: gormstore.NewAlertStore(w.db), Leases: w.leases, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
			AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			alerts.Run(ctx, time.Hour)
		}()
		select {
		case <-box.got:
		case <-time.After(20 * time.Second):
			t.Error("no alert email from the sweep at start: the first sweep waits an interval (an hour)")
		}
		cancel()
		<-done
		if got := box.take(o.Email); len(got) != 1 {
			t.Fatalf("%d emails, want 1", len(got))
		}
	})
}
