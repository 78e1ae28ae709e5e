package storetest

import (
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testAlertSchedule: an owner's alert schedule starts at once, is kept as
// set, and off leaves the owner out of AlertOwners; MarkEmailed records
// when the owner's last alert went out.
func testAlertSchedule(t *testing.T, s Stores, a ports.AlertStore) {
	o := newOwner(t, s)
	sched, last, err := a.AlertSchedule(ctx, o.ID)
	if err != nil || sched.Frequency != core.AlertAtOnce || !last.IsZero() {
		t.Fatalf("a new owner's schedule = %+v, %v, %v", sched, last, err)
	}
	if _, _, err := a.AlertSchedule(ctx, "no-such-owner"); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("a missing owner's schedule: %v", err)
	}
	if err := a.SetAlertSchedule(ctx, "no-such-owner", core.AlertSchedule{Frequency: core.AlertOff}); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("setting a missing owner's schedule: %v", err)
	}
	daily := core.AlertSchedule{Frequency: core.AlertDaily, Hour: 21, Zone: "America/New_York"}
	if err := a.SetAlertSchedule(ctx, o.ID, daily); err != nil {
		t.Fatal(err)
	}
	if got, _, err := a.AlertSchedule(ctx, o.ID); err != nil || got != daily {
		t.Fatalf("schedule = %+v, %v; want %+v", got, err, daily)
	}

	p := newPhrase(t, s, o.ID, "schedule", "x", "")
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post("sched-" + unique()), PhraseIDs: []string{p.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	scoreMatch(t, s, res.Matches[0], core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
	listed := func() bool {
		owners, err := a.AlertOwners(ctx, 70)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range owners {
			if x.ID == o.ID {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatal("an owner on a daily digest with a pending match is not listed")
	}
	if err := a.SetAlertSchedule(ctx, o.ID, core.AlertSchedule{Frequency: core.AlertOff}); err != nil {
		t.Fatal(err)
	}
	if listed() {
		t.Fatal("an owner whose alerts are off is listed")
	}
	if err := a.SetAlertSchedule(ctx, o.ID, core.AlertSchedule{Frequency: core.AlertAtOnce}); err != nil {
		t.Fatal(err)
	}
	if !listed() {
		t.Fatal("an owner back at once is not listed")
	}
	at := time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC)
	if err := a.MarkEmailed(ctx, o.ID, []string{res.Matches[0].ID}, at); err != nil {
		t.Fatal(err)
	}
	if got, last, err := a.AlertSchedule(ctx, o.ID); err != nil || !last.Equal(at) || got.Frequency != core.AlertAtOnce {
		t.Fatalf("after an email: %+v, last %v, %v", got, last, err)
	}
}
