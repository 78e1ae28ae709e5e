package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Periodic holds the stores behind periodic work: leases and alerts.
type Periodic struct {
	Leases ports.LeaseStore
	Alerts ports.AlertStore
}

// RunPeriodic runs the lease and alert cases. s must share p's database.
func RunPeriodic(t *testing.T, s Stores, p Periodic) {
	t.Run("Leases", func(t *testing.T) { t.Parallel(); testLeases(t, p.Leases) })
	t.Run("Alerts", func(t *testing.T) { t.Parallel(); testAlerts(t, s, p.Alerts) })
	t.Run("AlertSchedule", func(t *testing.T) { t.Parallel(); testAlertSchedule(t, s, p.Alerts) })
}

func testLeases(t *testing.T, l ports.LeaseStore) {
	name := "work-" + unique()
	ok, err := l.Acquire(ctx, name, "a", time.Hour)
	if err != nil || !ok {
		t.Fatalf("first Acquire = %v, %v", ok, err)
	}
	if ok, _ := l.Acquire(ctx, name, "b", time.Hour); ok {
		t.Fatal("a held lease was taken by another holder")
	}
	if ok, _ := l.Acquire(ctx, name, "a", time.Hour); !ok {
		t.Fatal("the holder could not renew its lease")
	}
	if err := l.Release(ctx, name, "b"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Acquire(ctx, name, "b", time.Hour); ok {
		t.Fatal("another holder released the lease")
	}
	if err := l.Release(ctx, name, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Acquire(ctx, name, "b", -time.Second); !ok {
		t.Fatal("a released lease could not be taken")
	}
	if ok, _ := l.Acquire(ctx, name, "c", time.Hour); !ok {
		t.Fatal("an expired lease could not be taken")
	}
	// Many contenders at once: exactly one wins.
	race := "race-" + unique()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := l.Acquire(ctx, race, unique(), time.Hour)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d holders won one lease", wins.Load())
	}
}

func testAlerts(t *testing.T, s Stores, a ports.AlertStore) {
	o, other := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, o.ID, "alerts", "x", "")
	var batch []ports.PostMatches
	for i := 0; i < 14; i++ {
		batch = append(batch, ports.PostMatches{Post: post("alert-" + unique()), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range res.Matches[:13] { // the last stays unscored
		scoreMatch(t, s, m, core.Score{Value: 60 + 3*i, Intent: core.IntentBuying, Reason: "r"})
	}
	owners, err := a.AlertOwners(ctx, 70)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range owners {
		found = found || x.ID == o.ID
		if x.ID == other.ID {
			t.Fatal("an owner without matches is listed")
		}
	}
	if !found {
		t.Fatal("the owner is not listed")
	}
	ms, err := a.PendingAlerts(ctx, o.ID, 70, 5)
	if err != nil || len(ms) != 5 || ms[0].Score.Value != 96 || ms[4].Score.Value != 84 {
		t.Fatalf("PendingAlerts = %d matches, %v", len(ms), err)
	}
	if ms, _ := a.PendingAlerts(ctx, other.ID, 0, 10); len(ms) != 0 {
		t.Fatal("another owner's matches are pending for them")
	}
	ids := []string{ms[0].ID, ms[1].ID}
	if err := a.MarkEmailed(ctx, other.ID, ids, time.Now()); err != nil {
		t.Fatal(err)
	}
	if again, _ := a.PendingAlerts(ctx, o.ID, 70, 5); again[0].ID != ms[0].ID {
		t.Fatal("another owner marked the matches emailed")
	}
	if err := a.MarkEmailed(ctx, o.ID, ids, time.Now()); err != nil {
		t.Fatal(err)
	}
	rest, _ := a.PendingAlerts(ctx, o.ID, 70, 100)
	if len(rest) != 7 {
		t.Fatalf("%d pending after marking 2 of 9, want 7", len(rest))
	}
	for _, m := range rest {
		if m.ID == ids[0] || m.ID == ids[1] {
			t.Fatal("an emailed match is pending again")
		}
	}
}
