package core

import "time"

// MaxReplay is the most deliveries one replay queues; the answer says
// whether more remain, and the same call again takes the next ones.
const MaxReplay = 1000

// CheckReplayRange returns a KindInvalid error unless from and to are
// both set and from is before to: a replay takes the deliveries made from
// from up to, not including, to.
func CheckReplayRange(from, to time.Time) error {
	switch {
	case from.IsZero():
		return Errorf(KindInvalid, "from is required")
	case to.IsZero():
		return Errorf(KindInvalid, "to is required")
	case !from.Before(to):
		return Errorf(KindInvalid, "from must be before to")
	}
	return nil
}

// Replayable reports whether a replay takes d: a match.created message
// that failed. A test ping is not replayed; POST /webhooks/{id}/test
// sends a fresh one.
func (d Delivery) Replayable() bool {
	return d.Status == DeliveryFailed && d.Event == EventMatchCreated && d.Trigger != TriggerPing && d.MatchID != ""
}

// ReplayFailed is the rule of a replay: for each of w's replayable
// deliveries in failed, a new delivery of the same event and match,
// trigger replay, queued at time at (due then, or at a chat channel's
// next slot: Webhook.DueAt) with a fresh set of tries.
// The new deliveries carry no ID and no payload: the store names them,
// and the first try renders the match as it then stands, under the new
// id. The failed ones stay in the log as they are. KindConflict when w is
// switched off: its queue would hold the replays until it is on again,
// where the owner asked for them now.
func ReplayFailed(w Webhook, failed []Delivery, at time.Time) ([]Delivery, error) {
	if !w.Active {
		return nil, Errorf(KindConflict, "the webhook is switched off: switch it on first, then replay")
	}
	var out []Delivery
	for _, d := range failed {
		if d.WebhookID != w.ID || !d.Replayable() {
			continue
		}
		out = append(out, Delivery{
			WebhookID: w.ID, OwnerID: d.OwnerID, MatchID: d.MatchID, Event: d.Event, Trigger: TriggerReplay,
			Status: DeliveryQueued, CreatedAt: at, NextAttemptAt: w.DueAt(at),
		})
	}
	return out, nil
}
