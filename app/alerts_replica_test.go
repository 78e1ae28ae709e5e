package app

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// meanwhileBox keeps mail, and at its first message lets time pass and
// runs meanwhile, as another replica's sweep does while this one mails.
type meanwhileBox struct {
	alertBox
	once      sync.Once
	meanwhile func()
}

func (b *meanwhileBox) Send(ctx context.Context, m ports.Mail) error {
	b.once.Do(b.meanwhile)
	return b.alertBox.Send(ctx, m)
}

// A sweep that takes a while (its sends, one owner after another) reads
// its time once, at its start. Another replica's sweep meanwhile mails
// an owner this one has not reached, stamped with a later time: that
// email is the owner's last, not a stamp of a clock that ran ahead, so
// the slow sweep does not mail the owner again minutes later with what
// came since.
func TestAlertSweepLeavesAnOwnerAnotherReplicaMailedSinceItBegan(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		start := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
		clock := &handClock{now: start}
		store := gormstore.NewAlertStore(w.db)
		owners := []core.Owner{hourlyOwner(t, w, store, "one@example.com"), hourlyOwner(t, w, store, "two@example.com")}
		for i, o := range owners {
			scoredMatches(t, w, o, slices.Repeat([]int{90}, i+1)...)
		}
		other := &alertBox{}
		b := NewAlerts(AlertDeps{Store: store, Leases: w.leases, Mailer: other, Clock: clock, Log: quiet, Holder: "h2"},
			AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
		box := &meanwhileBox{}
		box.meanwhile = func() {
			clock.add(25 * time.Minute)
			if _, err := b.Sweep(ctx); err != nil {
				t.Error(err)
			}
			for i, o := range owners {
				scoredMatches(t, w, o, slices.Repeat([]int{90}, i+3)...) // scored since
			}
		}
		a := NewAlerts(AlertDeps{Store: store, Leases: w.leases, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
			AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
		if _, err := a.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		for _, o := range owners {
			if n := len(box.take(o.Email)) + len(other.take(o.Email)); n != 1 {
				t.Errorf("%s: %d emails within 25 minutes, want 1", o.Email, n)
			}
		}
	})
}
