package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// WebhookStore keeps owners' webhooks and the log of their deliveries:
// what the subscription service (app.Webhooks) reads and changes on an
// owner's behalf. Every method is scoped to one owner: another owner's
// webhook or delivery is KindNotFound, as an unknown one is.
//
// Deliveries of match.created are queued by MatchStore.SetScores, in the
// transaction that stores the first score, so a stored score never loses
// its messages; which webhooks get one is decided by the DeliveryPlan the
// caller hands in. Sending them is the DeliveryQueue's. It is safe for
// concurrent use, from this process and from others on the same database.
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
	// DeleteWebhook removes the webhook and every delivery of it, queued
	// ones included. KindNotFound.
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
	// NextAttemptAt and free to claim from the DeliveryQueue at once (a
	// manual retry). An error from change is returned as is and nothing
	// is stored. KindNotFound.
	UpdateDelivery(ctx context.Context, ownerID, webhookID, id string, change func(core.Delivery) (core.Delivery, error)) (core.Delivery, error)

	// RotateSecret replaces the webhook's signing secret, under its row
	// lock, with the one seal returns for its id, and returns the webhook
	// as it then stands. The replaced secret is kept, sealed as it was,
	// as the previous secret until until (core.SecretOverlapEnd); a
	// zero until keeps none. A previous secret kept from an earlier
	// rotation is forgotten either way. An error from seal is returned as
	// is and nothing is stored. KindNotFound.
	RotateSecret(ctx context.Context, ownerID, id string, until time.Time, seal func(id string) ([]byte, error)) (core.Webhook, error)
	// WebhookSecrets returns one webhook with both its sealed secrets,
	// for a message sent now (a test ping). KindNotFound.
	WebhookSecrets(ctx context.Context, ownerID, id string) (core.Webhook, SealedSecrets, error)
	// ReplayDeliveries queues again, as new deliveries, failed messages
	// of the webhook, in one transaction under the webhook's row lock so
	// that concurrent replays never queue one match twice. It reads the
	// failed match.created deliveries made in [q.From, q.To) that are the
	// newest delivery of their match to the webhook (a match whose replay
	// is queued, delivered or failed since is left to that replay) and
	// whose match still exists, oldest first, at most q.Limit of them.
	// plan is given the webhook as it stands, those deliveries and the
	// store's time, and returns the deliveries to queue, without IDs (the
	// store names them; their MatchID is kept); its error is returned as
	// is and nothing is stored. The result holds what was queued and
	// whether more deliveries than q.Limit matched. The log is not
	// trimmed here: the failed ones stay until the replays finish.
	// KindNotFound.
	ReplayDeliveries(ctx context.Context, ownerID, webhookID string, q ReplayQuery, plan ReplayPlan) (ReplayResult, error)
}

// SealedSecrets are a webhook's signing secrets as stored, each sealed
// with the webhook's id as associated data.
type SealedSecrets struct {
	Current []byte
	// Previous is the secret the last rotation replaced, nil when none is
	// kept. Whether it still signs is core.Webhook.PreviousSecretSigns'
	// to say: it is kept until swept (DeliveryQueue.ForgetPreviousSecrets).
	Previous []byte
}

// ReplayQuery bounds one ReplayDeliveries call.
type ReplayQuery struct {
	From, To time.Time // deliveries made at or after From and before To
	Limit    int       // at most this many
}

// ReplayPlan decides what a replay queues: given the webhook, the failed
// deliveries found and the time, the new deliveries (core.ReplayFailed).
type ReplayPlan func(w core.Webhook, failed []core.Delivery, at time.Time) ([]core.Delivery, error)

// ReplayResult is what a replay queued.
type ReplayResult struct {
	Queued []core.Delivery // the new deliveries, oldest first, IDs set
	More   bool            // more failed deliveries matched than the limit took
}

// WebhookChange is a change an owner asks for; nil fields stay as they
// are.
type WebhookChange struct {
	Active    *bool
	MinScore  *int
	Platforms []string // nil: unchanged; otherwise a non-empty list of platforms
}
