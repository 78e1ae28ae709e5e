package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// DeliveryQueue is the queue of webhook deliveries still to send, as the
// delivery worker (app.DeliveryWorker) works it. A queued delivery is a
// row with its next attempt time; a sender claims it with a lease, so of
// several replicas one makes each attempt, and whatever a stopped process
// held is claimed again once its lease runs out. Deliveries are queued by
// MatchStore.SetScores (match.created), by WebhookStore.UpdateDelivery
// (a manual retry) and by WebhookStore.ReplayDeliveries (a replay).
//
// The queue is not scoped to an owner: a claim takes due deliveries of
// every owner, and what was claimed is named by its DueDelivery. Its
// methods return no error kind of their own: an error is the database's
// (KindInternal) or the context's. It is safe for concurrent use, from
// this process and from others on the same database.
type DeliveryQueue interface {
	// ClaimDeliveries leases queued deliveries that are due by the store's
	// clock and whose lease ran out, of active webhooks only, earliest
	// due first, within the bounds of c. Concurrent claims, from this
	// process or another, never return the same delivery while its lease
	// runs.
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]DueDelivery, error)
	// ClaimBurst leases, for a chat channel (webhookID) whose deliveries
	// the caller holds, the rest of that channel's match.created
	// deliveries that are due by the store's clock, whose lease ran out
	// and that have no payload (their message is written from the match
	// at each try), earliest due first, at most limit: the caller sends
	// them with those it holds as one message. Each comes with its match
	// read as ClaimDeliveries reads it, nil when the match was deleted.
	// None when the channel is switched off or gone. Concurrent claims
	// of either kind never return the same delivery while its lease runs.
	ClaimBurst(ctx context.Context, webhookID string, limit int, lease time.Duration) ([]DueDelivery, error)
	// FinishAttempts records attempts on claimed deliveries, in order,
	// in one transaction: each delivery as the caller left it (the
	// caller decides the retry, the failure and the next time), with the
	// payload sent, and its lease ended. For each recorded delivery that
	// is delivered or failed, rules.Webhook is given its webhook as it
	// then stands and the delivery, under the webhook's row lock, and
	// what it returns is stored; the webhook is read and written in the
	// same transaction, so deliveries finishing together all count. The
	// logs of webhooks with such deliveries are then trimmed to
	// rules.KeepLog as WebhookStore.AddDelivery trims. Results are in
	// the order of the attempts; on an error nothing is recorded.
	//
	// An attempt whose lease was lost (it ran out and another claim took
	// the delivery, or the delivery or its webhook was deleted) stores
	// nothing and its result is not Recorded: the holder of the new lease
	// records its own attempt.
	FinishAttempts(ctx context.Context, attempts []Attempt, rules AttemptRules) ([]AttemptResult, error)
	// ReleaseDeliveries ends the leases of claimed deliveries that were
	// not tried, where the lease is still the claim's, so the next claim,
	// in this process or another, takes them at once. A delivery whose
	// lease was lost, or that is gone, is passed over.
	ReleaseDeliveries(ctx context.Context, due []DueDelivery) error
	// DropDelivery removes a claimed delivery that cannot be sent (its
	// match was deleted before the first try), if the lease is still
	// held; otherwise it does nothing.
	DropDelivery(ctx context.Context, due DueDelivery) error
	// ForgetPreviousSecrets clears the previous signing secret of every
	// webhook whose rotation's overlap ended at or before before, so that
	// a replaced secret is kept no longer than it signs, and returns how
	// many it cleared.
	ForgetPreviousSecrets(ctx context.Context, before time.Time) (int, error)
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
	// Match is that match, read with the claim, when the delivery has no
	// payload yet: its first try renders the body from it. Nil when the
	// payload is stored, or when the match was deleted meanwhile.
	Match *core.Match
	// Webhook is the webhook as it stood at the claim.
	Webhook core.Webhook
	// SealedSecret is the webhook's signing secret as stored, sealed with
	// the webhook id as associated data.
	SealedSecret []byte
	// PreviousSealedSecret is the secret its last rotation replaced,
	// sealed the same way; nil when none is kept. Whether it still signs
	// is core.Webhook.PreviousSecretSigns' to say.
	PreviousSealedSecret []byte
	// LeaseUntil identifies the claim: FinishAttempts, ReleaseDeliveries
	// and DropDelivery act only while the row still carries it.
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
	// EndPeriod ends the open period of a channel on a digest that
	// Webhook switches off, in the same transaction, as
	// ChannelStore.UpdateChannelPeriod ends one its owner takes off its
	// digest: the digest waits queued while the channel is off, and the
	// period the switch-on starts drops nothing. Nil leaves it open.
	EndPeriod PeriodEnd
}

// AttemptResult is what recording an attempt did.
type AttemptResult struct {
	Recorded bool         // false when the lease was lost
	Webhook  core.Webhook // the webhook as it then stands
	// SwitchedOff is true for exactly the attempt whose recording
	// switched the webhook off, so a switch-off is followed up once.
	SwitchedOff bool
}
