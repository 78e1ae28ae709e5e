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
