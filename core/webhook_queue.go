package core

import "time"

// ChannelSlot is when a chat channel's delivery queued at at falls due:
// at the next whole second after at. Every delivery a channel gets
// within one second falls due at the same instant, and none of them
// before it, so the delivery worker sends that second's matches as one
// message (Slack asks for about one message a second, Telegram for
// about one a second to a chat, Discord answers 429 past about five in
// two seconds); a match waits less than a second for it. A whole second
// opens the next window: the slot it ends may be under way already.
func ChannelSlot(at time.Time) time.Time {
	return at.Truncate(time.Second).Add(time.Second)
}

// DueAt is when a delivery of w queued, or rescheduled, for at falls
// due: then for a webhook, whose receiver takes each message as it
// comes; at the channel's next slot (ChannelSlot) for a chat channel.
func (w Webhook) DueAt(at time.Time) time.Time {
	if w.Kind.IsChannel() {
		return ChannelSlot(at)
	}
	return at
}

// QueueMatchCreated is the rule for which webhooks get a match just
// scored: a queued, scheduled match.created delivery for each of the
// owner's hooks that Wants m, due at once for a webhook and at the next
// slot for a chat channel (Webhook.DueAt). The deliveries carry no ID
// and no payload: the store names them, and the first try renders the
// match as it then stands (the webhook message, or a channel's). A
// channel on a digest gets none: its digest gathers the match later.
func QueueMatchCreated(m Match, hooks []Webhook, at time.Time) []Delivery {
	var out []Delivery
	for _, h := range hooks {
		if h.OwnerID != m.OwnerID || !h.Wants(m) || h.Schedule.Digest() {
			continue
		}
		out = append(out, Delivery{
			WebhookID: h.ID, OwnerID: m.OwnerID, Event: EventMatchCreated,
			Trigger: TriggerScheduled, Status: DeliveryQueued, CreatedAt: at, NextAttemptAt: h.DueAt(at),
		})
	}
	return out
}
