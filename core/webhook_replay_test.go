package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A range needs both ends, the first before the second.
func TestCheckReplayRange(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		from, to time.Time
		msg      string
	}{
		{"a day", at.Add(-24 * time.Hour), at, ""},
		{"a microsecond", at.Add(-time.Microsecond), at, ""},
		{"no from", time.Time{}, at, "from is required"},
		{"no to", at, time.Time{}, "to is required"},
		{"empty", at, at, "from must be before to"},
		{"backwards", at, at.Add(-time.Hour), "from must be before to"},
	} {
		err := core.CheckReplayRange(c.from, c.to)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), c.msg) {
			t.Errorf("%s: %v, want invalid_parameter %q", c.name, err, c.msg)
		}
	}
	if core.MaxReplay != 1000 {
		t.Fatalf("MaxReplay = %d", core.MaxReplay)
	}
}

// Failed match.created deliveries are replayed, each as a new queued
// delivery of the same event and match with trigger replay, due at
// once, with no id and no payload (the store names it; its first try
// renders the match as it then stands). Pings, queued and delivered
// ones, and other webhooks' deliveries are passed over; a switched-off
// webhook refuses with a conflict that says to switch it on.
func TestReplayFailed(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	w := core.Webhook{ID: "h1", OwnerID: "o1", Active: true}
	failed := func(id, match string) core.Delivery {
		return core.Delivery{ID: id, WebhookID: "h1", OwnerID: "o1", MatchID: match, Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, Tries: 4, ResponseStatus: 500, Error: "http 500",
			Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: at.Add(-time.Hour), LastAttemptAt: at.Add(-time.Minute)}
	}
	ping := failed("p1", "")
	ping.Event, ping.Trigger = core.EventPing, core.TriggerPing
	delivered := failed("d2", "m2")
	delivered.Status = core.DeliveryDelivered
	queued := failed("d3", "m3")
	queued.Status = core.DeliveryQueued
	manual := failed("d4", "m4")
	manual.Trigger = core.TriggerManual
	again := failed("d5", "m5")
	again.Trigger = core.TriggerReplay
	theirs := failed("d6", "m6")
	theirs.WebhookID = "h2"

	got, err := core.ReplayFailed(w, []core.Delivery{failed("d1", "m1"), ping, delivered, queued, manual, again, theirs}, at)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"m1", "m4", "m5"}
	if len(got) != len(want) {
		t.Fatalf("replayed %d deliveries, want %d: %+v", len(got), len(want), got)
	}
	for i, d := range got {
		if d.MatchID != want[i] || d.ID != "" || d.WebhookID != "h1" || d.OwnerID != "o1" || d.Event != core.EventMatchCreated ||
			d.Trigger != core.TriggerReplay || d.Status != core.DeliveryQueued || d.Tries != 0 || d.ResponseStatus != 0 ||
			d.Error != "" || len(d.Payload) != 0 || !d.CreatedAt.Equal(at) || !d.NextAttemptAt.Equal(at) || !d.LastAttemptAt.IsZero() {
			t.Errorf("replay %d: %+v", i, d)
		}
	}
	if !core.TriggerReplay.Valid() {
		t.Error("the replay trigger is not valid")
	}

	off := w
	off.Active, off.DisabledReason = false, "switched off after 5 failed deliveries in a row"
	if _, err := core.ReplayFailed(off, []core.Delivery{failed("d1", "m1")}, at); !core.IsKind(err, core.KindConflict) ||
		!strings.Contains(core.Message(err), "switch it on first") {
		t.Fatalf("replay on a switched-off webhook: %v", err)
	}
	// Nothing to replay is no error: the answer says none were queued.
	if got, err := core.ReplayFailed(w, nil, at); err != nil || len(got) != 0 {
		t.Fatalf("nothing to replay: %+v, %v", got, err)
	}
}

// Replayable names the deliveries a replay takes.
func TestReplayable(t *testing.T) {
	d := core.Delivery{Event: core.EventMatchCreated, Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, MatchID: "m1"}
	if !d.Replayable() {
		t.Fatal("a failed match.created delivery is not replayable")
	}
	for name, change := range map[string]func(*core.Delivery){
		"delivered": func(d *core.Delivery) { d.Status = core.DeliveryDelivered },
		"queued":    func(d *core.Delivery) { d.Status = core.DeliveryQueued },
		"ping":      func(d *core.Delivery) { d.Event, d.Trigger, d.MatchID = core.EventPing, core.TriggerPing, "" },
		"no match":  func(d *core.Delivery) { d.MatchID = "" },
	} {
		c := d
		change(&c)
		if c.Replayable() {
			t.Errorf("%s: replayable", name)
		}
	}
}
