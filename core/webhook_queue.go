package core

import "time"

// QueueMatchCreated is the rule for which webhooks get a match just
// scored: a queued, scheduled match.created delivery, due at once, for
// each of the owner's hooks that Wants m. The deliveries carry no ID and
// no payload: the store names them, and the first try renders the match
// as it then stands (the webhook message, or a channel's). A channel on
// a digest gets none: its digest gathers the match later.
func QueueMatchCreated(m Match, hooks []Webhook, at time.Time) []Delivery {
	var out []Delivery
	for _, h := range hooks {
		if h.OwnerID != m.OwnerID || !h.Wants(m) || h.Schedule.Digest() {
			continue
		}
		out = append(out, Delivery{
			WebhookID: h.ID, OwnerID: m.OwnerID, Event: EventMatchCreated,
			Trigger: TriggerScheduled, Status: DeliveryQueued, CreatedAt: at, NextAttemptAt: at,
		})
	}
	return out
}
