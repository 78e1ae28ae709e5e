package core_test

import (
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

func TestQueueMatchCreated(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	m := core.Match{ID: "m1", OwnerID: "o1", Platform: core.X, Score: &core.Score{Value: 80}}
	hooks := []core.Webhook{
		{ID: "all", OwnerID: "o1", Active: true, MinScore: 70},
		{ID: "strict", OwnerID: "o1", Active: true, MinScore: 90},
		{ID: "fb", OwnerID: "o1", Active: true, Platforms: []core.Platform{core.Facebook}},
		{ID: "x", OwnerID: "o1", Active: true, Platforms: []core.Platform{core.X}},
		{ID: "off", OwnerID: "o1", Active: false},
		{ID: "theirs", OwnerID: "o2", Active: true},
	}
	got := core.QueueMatchCreated(m, hooks, at)
	if len(got) != 2 || got[0].WebhookID != "all" || got[1].WebhookID != "x" {
		t.Fatalf("queued %+v, want deliveries to all and x", got)
	}
	for _, d := range got {
		if d.ID != "" || d.OwnerID != "o1" || d.Event != core.EventMatchCreated || d.Trigger != core.TriggerScheduled ||
			d.Status != core.DeliveryQueued || !d.CreatedAt.Equal(at) || !d.NextAttemptAt.Equal(at) || d.Tries != 0 || d.Payload != nil {
			t.Fatalf("queued delivery %+v", d)
		}
	}
	unscored := m
	unscored.Score = nil
	if got := core.QueueMatchCreated(unscored, hooks, at); len(got) != 0 {
		t.Fatalf("an unscored match queued %+v", got)
	}
}

// A channel at once gets a delivery as a webhook does; a channel on a
// digest gets none, its digest gathering the match later.
func TestQueueMatchCreatedChannels(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	m := core.Match{ID: "m1", OwnerID: "o1", Platform: core.X, Score: &core.Score{Value: 80}}
	hooks := []core.Webhook{
		{ID: "slack-now", OwnerID: "o1", Active: true, Kind: core.ChannelSlack, Schedule: core.AlertSchedule{Frequency: core.AlertAtOnce}},
		{ID: "ntfy-zero", OwnerID: "o1", Active: true, Kind: core.ChannelNtfy},
		{ID: "slack-hourly", OwnerID: "o1", Active: true, Kind: core.ChannelSlack, Schedule: core.AlertSchedule{Frequency: core.AlertHourly}},
		{ID: "tg-daily", OwnerID: "o1", Active: true, Kind: core.ChannelTelegram, Schedule: core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}},
	}
	got := core.QueueMatchCreated(m, hooks, at)
	if len(got) != 2 || got[0].WebhookID != "slack-now" || got[1].WebhookID != "ntfy-zero" {
		t.Fatalf("queued %+v, want deliveries to the two channels at once", got)
	}
}

// A chat channel at once is paced: its delivery falls due at the next
// whole second after it was queued, so a second's matches fall due
// together; a webhook's is due at once.
func TestQueueMatchCreatedPacesChannels(t *testing.T) {
	m := core.Match{ID: "m1", OwnerID: "o1", Platform: core.X, Score: &core.Score{Value: 80}}
	hooks := []core.Webhook{
		{ID: "hook", OwnerID: "o1", Active: true},
		{ID: "slack", OwnerID: "o1", Active: true, Kind: core.ChannelSlack},
	}
	for _, c := range []struct{ at, slot string }{
		{"2026-03-01T10:00:00.000001Z", "2026-03-01T10:00:01Z"},
		{"2026-03-01T10:00:00.5Z", "2026-03-01T10:00:01Z"},
		{"2026-03-01T10:00:00.999999Z", "2026-03-01T10:00:01Z"},
		// A whole second starts the next one's window: the slot ending
		// it may be under way already.
		{"2026-03-01T10:00:01Z", "2026-03-01T10:00:02Z"},
	} {
		at, _ := time.Parse(time.RFC3339Nano, c.at)
		slot, _ := time.Parse(time.RFC3339Nano, c.slot)
		got := core.QueueMatchCreated(m, hooks, at)
		if len(got) != 2 || !got[0].NextAttemptAt.Equal(at) || !got[1].NextAttemptAt.Equal(slot) || !got[1].CreatedAt.Equal(at) {
			t.Fatalf("queued at %v: %+v; want the webhook's due then, the channel's at %v", at, got, slot)
		}
		if !core.ChannelSlot(at).Equal(slot) || !hooks[0].DueAt(at).Equal(at) || !hooks[1].DueAt(at).Equal(slot) {
			t.Fatalf("ChannelSlot(%v) = %v, want %v", at, core.ChannelSlot(at), slot)
		}
	}
}

// Replays of a channel fall due at its next slot too, together.
func TestReplayFailedPacesChannels(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 250_000_000, time.UTC)
	ch := core.Webhook{ID: "c1", OwnerID: "o1", Active: true, Kind: core.ChannelTelegram}
	var failed []core.Delivery
	for _, id := range []string{"m1", "m2", "m3"} {
		failed = append(failed, core.Delivery{ID: "d" + id, WebhookID: "c1", OwnerID: "o1", MatchID: id, Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryFailed})
	}
	got, err := core.ReplayFailed(ch, failed, at)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReplayFailed = %+v, %v", got, err)
	}
	for _, d := range got {
		if !d.NextAttemptAt.Equal(at.Truncate(time.Second).Add(time.Second)) || !d.CreatedAt.Equal(at) {
			t.Fatalf("replay %+v", d)
		}
	}
}
