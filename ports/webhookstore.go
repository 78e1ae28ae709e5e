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
	// row exists and no row ever lacks one). allow is given the owner's
	// usage inside the transaction, under a lock on the owner, so
	// concurrent creates cannot pass the plan limit it checks; its error
	// is returned as is and nothing is stored. KindConflict when the
	// owner has a webhook with the same URL; KindNotFound for an unknown
	// owner.
	CreateWebhook(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error
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

	// NewDeliveryID returns a fresh delivery id, of the kind the store
	// gives the deliveries it queues, for a delivery made by the caller
	// (a test ping, whose id is in the body sent before it is stored).
	NewDeliveryID() string
	// AddDelivery stores d as it is (a test ping, stored once sent) and
	// trims the webhook's log to its keep newest entries: finished
	// deliveries past them are deleted, queued ones never. d.ID is set by
	// the caller. KindNotFound when the webhook is not d.OwnerID's.
	AddDelivery(ctx context.Context, d core.Delivery, keep int) error
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
	// in one transaction: each delivery as the caller left it (the
	// caller decides the retry, the failure and the next time), with the
	// payload sent, and its lease ended. For each recorded delivery that
	// is delivered or failed, rules.Webhook is given its webhook as it
	// then stands and the delivery, under the webhook's row lock, and
	// what it returns is stored; the webhook is read and written in the
	// same transaction, so deliveries finishing together all count. The
	// logs of webhooks with such deliveries are then trimmed to
	// rules.KeepLog as AddDelivery trims. Results are in the order of the
	// attempts.
	//
	// An attempt whose lease was lost (it ran out and another claim took
	// the delivery, or the delivery or its webhook was deleted) stores
	// nothing and its result is not Recorded: the holder of the new lease
	// records its own attempt.
	FinishAttempts(ctx context.Context, attempts []Attempt, rules AttemptRules) ([]AttemptResult, error)
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

// AttemptRules is what finished deliveries do beyond themselves,
// decided by the caller and applied by FinishAttempts inside its
// transaction.
type AttemptRules struct {
	// Webhook returns the webhook after d reached a final status: its
	// count of failures in a row, and whether it stays on. Called under
	// the webhook's row lock, in the order of the attempts, each call
	// given what the one before returned for that webhook. Nil leaves
	// webhooks as they are.
	Webhook func(w core.Webhook, d core.Delivery) core.Webhook
	// KeepLog is how many of its newest deliveries a webhook's log keeps;
	// 0 keeps every one.
	KeepLog int
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
