package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// WebhookStore keeps webhooks and their deliveries. Methods that take an
// owner are scoped to that owner: another owner's webhook or delivery is
// KindNotFound.
//
// Deliveries of match.created are queued by MatchStore.SetScores, in the
// transaction that stores the first score, so a stored score never loses
// its messages; which webhooks get one is decided by the DeliveryPlan the
// caller hands in. A queued delivery is a row with its next attempt time;
// whoever sends claims it with a lease, so of several replicas one makes
// each attempt.
type WebhookStore interface {
	// CreateWebhook stores w, setting its ID and CreatedAt, with the sealed
	// signing secret seal returns for the new id (the id is the seal's
	// associated data, so the secret is known to the caller before the
	// row exists and no row ever lacks one). limits.CheckNewWebhook is
	// checked against the owner's usage in the same transaction, so
	// concurrent creates cannot pass the limit. KindConflict when the
	// owner has a webhook with the same URL; KindPlanLimit past the limit;
	// KindNotFound for an unknown owner.
	CreateWebhook(ctx context.Context, w *core.Webhook, limits core.Limits, seal func(id string) ([]byte, error)) error
	// Webhook returns one webhook and its sealed secret. KindNotFound.
	Webhook(ctx context.Context, ownerID, id string) (core.Webhook, []byte, error)
	// Webhooks lists the owner's webhooks, oldest first.
	Webhooks(ctx context.Context, ownerID string) ([]core.Webhook, error)
	// UpdateWebhook applies change to the webhook under a row lock and
	// stores what it returns (MinScore, Platforms, Active, DisabledReason,
	// ConsecutiveFailures; the rest is kept). An error from change is
	// returned as is and nothing is stored. KindNotFound.
	UpdateWebhook(ctx context.Context, ownerID, id string, change func(core.Webhook) (core.Webhook, error)) (core.Webhook, error)
	// DeleteWebhook removes the webhook and every delivery of it.
	// KindNotFound.
	DeleteWebhook(ctx context.Context, ownerID, id string) error

	// AddDelivery stores d as it is (a test ping, stored once sent) and
	// trims the webhook's log to its core.DeliveryLogSize newest entries;
	// queued deliveries are never trimmed. d.ID is set by the caller.
	// KindNotFound when the webhook is not d.OwnerID's.
	AddDelivery(ctx context.Context, d core.Delivery) error
	// Deliveries returns up to limit of the webhook's deliveries, newest
	// first. KindNotFound when the webhook is not the owner's.
	Deliveries(ctx context.Context, ownerID, webhookID string, limit int) ([]core.Delivery, error)
	// UpdateDelivery applies change to one delivery under a row lock and
	// stores its Trigger, Status, Tries, ResponseStatus, Error,
	// LastAttemptAt and NextAttemptAt; a queued result is due at
	// NextAttemptAt and free to claim. An error from change is returned as
	// is. KindNotFound.
	UpdateDelivery(ctx context.Context, ownerID, webhookID, id string, change func(core.Delivery) (core.Delivery, error)) (core.Delivery, error)

	// ClaimDeliveries leases queued deliveries that are due by the store's
	// clock and whose lease ran out, of active webhooks only, earliest
	// due first, within the bounds of c. Concurrent claims, from this
	// process or another, never return the same delivery while its lease
	// runs.
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]DueDelivery, error)
	// FinishAttempts records attempts on claimed deliveries, in order,
	// in one transaction: each delivery as core.Delivery.Attempted left
	// it, with the payload sent, and its lease ended. When a delivery is
	// final, its webhook's failure count moves by core's rule
	// (core.Webhook.AfterDelivery), switching it off when the rule says
	// so, and the log is trimmed as AddDelivery trims it; the count is
	// read and written in the same transaction, so deliveries finishing
	// together all count. Results are in the order of the attempts.
	//
	// An attempt whose lease was lost (it ran out and another claim took
	// the delivery, or the delivery or its webhook was deleted) stores
	// nothing and its result is not Recorded: the holder of the new lease
	// records its own attempt.
	FinishAttempts(ctx context.Context, attempts []Attempt) ([]AttemptResult, error)
	// ReleaseDeliveries ends the leases of claimed deliveries that were
	// not tried, where the lease is still the claim's, so the next claim,
	// in this process or another, takes them at once.
	ReleaseDeliveries(ctx context.Context, due []DueDelivery) error
	// DropDelivery removes a claimed delivery that cannot be sent (its
	// match was deleted before the first try), if the lease is still
	// held.
	DropDelivery(ctx context.Context, due DueDelivery) error
}

// DeliveryClaim bounds one ClaimDeliveries call.
type DeliveryClaim struct {
	Limit      int           // at most this many deliveries
	PerWebhook int           // at most this many of any one webhook; 0: no bound
	Skip       []string      // webhook ids to leave out: those already busy in the caller
	Lease      time.Duration // how long the claim holds each delivery
}

// DueDelivery is a claimed delivery with what sending it takes.
type DueDelivery struct {
	Delivery core.Delivery
	// MatchID names the match of a match.created delivery; empty for a
	// ping, whose payload is stored from the start.
	MatchID string
	// Match is that match, read with the claim, when the delivery has no
	// payload yet: its first try renders the body from it. Nil when the
	// payload is stored, or when the match was deleted meanwhile.
	Match *core.Match
	// Webhook is the webhook as it stood at the claim.
	Webhook core.Webhook
	// SealedSecret is the webhook's signing secret as stored, sealed with
	// the webhook id as associated data.
	SealedSecret []byte
	// LeaseUntil identifies the claim: FinishAttempts, ReleaseDeliveries
	// and DropDelivery act
	// only while the row still carries it.
	LeaseUntil time.Time
}

// Attempt is one try of a claimed delivery, to record.
type Attempt struct {
	Due      DueDelivery
	Delivery core.Delivery // as core.Delivery.Attempted left it, payload included
}

// AttemptResult is what recording an attempt did.
type AttemptResult struct {
	Recorded bool         // false when the lease was lost
	Webhook  core.Webhook // the webhook as it then stands
	// SwitchedOff is true for exactly the attempt whose recording
	// switched the webhook off, so a switch-off is followed up once.
	SwitchedOff bool
}

// WebhookChange is a change an owner asks for; nil fields stay as they
// are.
type WebhookChange struct {
	Active    *bool
	MinScore  *int
	Platforms []string // nil: unchanged; otherwise a non-empty list of platforms
}

// MatchRenderer renders a match as the public API shows it, so a
// match.created message carries exactly the record GET /matches/{id}
// returns.
type MatchRenderer interface {
	// RenderMatch returns the JSON of the match record.
	RenderMatch(m core.Match) ([]byte, error)
}
