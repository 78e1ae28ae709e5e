package core

import (
	"slices"
	"time"
)

// DefaultWebhookMinScore is the score a webhook asks for when its owner
// names none.
const DefaultWebhookMinScore = 70

// DeliveryLogSize is how many deliveries GET /webhooks/{id}/deliveries
// shows, newest first.
const DeliveryLogSize = 20

// Event types of webhook messages: the message body's "type" and the
// X-Service-Event header.
const (
	EventMatchCreated = "match.created"
	EventPing         = "ping"
	// EventDigest is a channel's digest of a period's matches; it has no
	// single match, so a replay passes it over (a retry sends it again).
	EventDigest = "digest"
)

// Webhook is an owner's subscription to strong matches. Its signing secret
// is not part of the value: the store keeps it encrypted and hands it only
// to whoever sends.
type Webhook struct {
	ID                  string
	OwnerID             string
	URL                 string // normalised by CheckWebhookURL
	MinScore            int    // 0 to 100
	Platforms           []Platform
	Active              bool
	DisabledReason      string // set when the service switched it off
	ConsecutiveFailures int    // final failed deliveries since the last delivered one
	CreatedAt           time.Time
	// PreviousSecretUntil is when the secret the last rotation replaced
	// stops signing (SecretOverlapEnd); zero when none does.
	PreviousSecretUntil time.Time
	// Kind is ChannelWebhook (or "") for a webhook, else the channel's
	// service. A channel's URL is its target's Redacted form; the target
	// itself is sealed where a webhook keeps its signing secret.
	Kind ChannelKind
	// Schedule is a channel's frequency (NewChannelSchedule): at once, or
	// a digest. A webhook's is the zero value, at once.
	Schedule AlertSchedule
	// LastDigestAt is when a digest channel's last period ended (its last
	// digest, or when it was put on a digest); zero before (DigestDue).
	LastDigestAt time.Time
}

// Wants reports whether a match.created message for m goes to the webhook:
// the webhook is active, m is scored at or above MinScore, and m's platform
// is one of Platforms (empty means every platform).
func (w Webhook) Wants(m Match) bool {
	if !w.Active || m.Score == nil || m.Score.Value < w.MinScore {
		return false
	}
	return len(w.Platforms) == 0 || slices.Contains(w.Platforms, m.Platform)
}

// CheckWebhookMinScore returns a KindInvalid error unless n is 0 to 100.
func CheckWebhookMinScore(n int) error {
	if n < 0 || n > 100 {
		return Errorf(KindInvalid, "min_score must be 0 to 100")
	}
	return nil
}

// Enable switches the webhook on again and forgets its failures, so that
// the owner starts from a clean slate after fixing the receiver.
func (w Webhook) Enable() Webhook {
	w.Active = true
	w.DisabledReason = ""
	w.ConsecutiveFailures = 0
	return w
}

// AfterDelivery returns the webhook as it stands once d reached a final
// status: its failure count moved by CountFailure and, when that says so,
// switched off with the reason recorded. Deliveries still queued and pings
// leave it unchanged.
func (w Webhook) AfterDelivery(d Delivery) Webhook {
	n, off, reason := CountFailure(w.ConsecutiveFailures, d)
	if off && d.Gone() && w.Kind.IsChannel() && d.Error != "" {
		// The sender reports a service's own "gone for good" as 410
		// whatever the service answered (a Slack 404 no_service, a
		// Telegram 403): the delivery's reason names the service's words
		// and the real status, where "http 410" would mislead.
		reason = "switched off at once: " + d.Error
	}
	w.ConsecutiveFailures = n
	if off && w.Active {
		w.Active = false
		w.DisabledReason = reason
	}
	return w
}

// Delivery is one webhook message and the history of sending it. The
// payload is kept as the exact bytes sent, so every try signs and sends the
// same body.
type Delivery struct {
	ID             string // also the message id and the X-Service-Delivery header
	WebhookID      string
	OwnerID        string
	MatchID        string // the match a match.created message announces; empty for a ping
	Event          string // EventMatchCreated or EventPing
	Trigger        DeliveryTrigger
	Status         DeliveryStatus
	Tries          int    // attempts made so far
	ResponseStatus int    // HTTP status of the last answer; 0 when none came
	Error          string // plain reason of the last failure; empty once delivered
	Payload        []byte
	CreatedAt      time.Time
	LastAttemptAt  time.Time // zero before the first try
	NextAttemptAt  time.Time // zero unless queued
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryQueued    DeliveryStatus = "queued"    // waiting for its next try
	DeliveryDelivered DeliveryStatus = "delivered" // a try got a 2xx answer
	DeliveryFailed    DeliveryStatus = "failed"    // every try failed
)

// Valid reports whether s is a known status.
func (s DeliveryStatus) Valid() bool {
	return s == DeliveryQueued || s == DeliveryDelivered || s == DeliveryFailed
}

// Final reports whether no more tries follow.
func (s DeliveryStatus) Final() bool { return s == DeliveryDelivered || s == DeliveryFailed }

// DeliveryTrigger says why a delivery exists.
type DeliveryTrigger string

const (
	TriggerScheduled DeliveryTrigger = "scheduled" // a match was scored
	TriggerManual    DeliveryTrigger = "manual"    // the owner asked to send it again
	TriggerPing      DeliveryTrigger = "ping"      // POST /webhooks/{id}/test
	TriggerReplay    DeliveryTrigger = "replay"    // a failed message made again by a replay (ReplayFailed)
)

// Valid reports whether t is a known trigger.
func (t DeliveryTrigger) Valid() bool {
	return t == TriggerScheduled || t == TriggerManual || t == TriggerPing || t == TriggerReplay
}
