package core

import "time"

// QueueMatchCreated is the rule for which webhooks get a match just
// scored: a queued, scheduled match.created delivery, due at once, for
// each of the owner's hooks that Wants m. The deliveries carry no ID and
// no payload: the store names them, and the first try renders the match
// as it then stands.
func QueueMatchCreated(m Match, hooks []Webhook, at time.Time) []Delivery {
	var out []Delivery
	for _, h := range hooks {
		if h.OwnerID != m.OwnerID || !h.Wants(m) {
			continue
		}
		out = append(out, Delivery{
			WebhookID: h.ID, OwnerID: m.OwnerID, Event: EventMatchCreated,
			Trigger: TriggerScheduled, Status: DeliveryQueued, CreatedAt: at, NextAttemptAt: at,
		})
	}
	return out
}
