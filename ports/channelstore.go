package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// ChannelStore keeps what is a channel's own. A channel is a webhook row
// of another kind (core.Webhook.Kind), so WebhookStore reads, deletes and
// logs channels as it does webhooks (Webhooks lists both, each with its
// Kind; Webhook and WebhookSecrets give a channel's sealed target as its
// secret; DeleteWebhook, Deliveries, AddDelivery, UpdateDelivery and
// ReplayDeliveries act on a channel's id alike), and the DeliveryQueue
// claims their deliveries with the webhooks'. Every method is scoped as
// WebhookStore's are. It is safe for concurrent use, from this process
// and from others on the same database.
type ChannelStore interface {
	// CreateChannel stores w, a channel (w.Kind one of core.ChannelKinds,
	// w.URL its target's Redacted form, w.Schedule its frequency),
	// setting its ID and CreatedAt, with the sealed target seal returns
	// for the new id. allow is given the owner's usage, webhooks and
	// channels counted together, under the owner's lock, as CreateWebhook
	// does; its error is returned as is and nothing is stored. Two
	// channels may have the same redacted form. KindNotFound for an
	// unknown owner.
	CreateChannel(ctx context.Context, w *core.Webhook, allow func(core.Usage) error, seal func(id string) ([]byte, error)) error
	// UpdateChannel applies change to the channel under its row lock,
	// given it and its sealed target, and stores what it returns: the
	// columns UpdateWebhook stores, the Schedule and LastDigestAt, and,
	// when the sealed target returned is not nil, that target and the
	// URL (its redacted form). An error from change is returned as is and
	// nothing is stored. KindNotFound for an unknown id and for a
	// webhook's.
	UpdateChannel(ctx context.Context, ownerID, id string, change func(w core.Webhook, sealed []byte) (core.Webhook, []byte, error)) (core.Webhook, error)
	// UpdateChannelPeriod is UpdateChannel that, when change takes the
	// channel, active and on a digest, off it (to at once, or switched
	// off), ends the channel's open period in the same transaction (end,
	// which sets LastDigestAt), its digest queued as AddDigest queues d,
	// the log trimmed to keep. An error from end is returned as is and
	// nothing is stored.
	UpdateChannelPeriod(ctx context.Context, ownerID, id string, change func(w core.Webhook, sealed []byte) (core.Webhook, []byte, error),
		end PeriodEnd, keep int) (core.Webhook, error)

	// DigestChannels returns every active channel on a digest (hourly or
	// daily), of every owner, in id order: those a digest sweep looks at.
	DigestChannels(ctx context.Context) ([]core.Webhook, error)
	// DigestMatches returns the matches a digest of ch gathers: the
	// owner's matches scored in [from, to) at or above ch.MinScore on one
	// of ch.Platforms (none: every platform), strongest first, then
	// newest, at most limit of them; and how many there are in all.
	DigestMatches(ctx context.Context, ch core.Webhook, from, to time.Time, limit int) ([]core.Match, int, error)
	// AddDigest ends ch's digest period at at: under the channel's row
	// lock, and only while the channel is active, on a digest, and its
	// LastDigestAt is still ch.LastDigestAt (no other sweep ended the
	// period meanwhile), it stores d when d is not nil (named by the
	// store, created and due at once by the store's clock, the one claims
	// compare with) and sets LastDigestAt to at, then trims the log as
	// AddDelivery does to keep. It reports whether it did; a channel
	// deleted meanwhile is false, not an error.
	AddDigest(ctx context.Context, ch core.Webhook, at time.Time, d *core.Delivery, keep int) (bool, error)
}

// DigestRead reads the matches a digest of a channel gathers, scored in
// [from, to), as ChannelStore.DigestMatches does.
type DigestRead func(from, to time.Time, limit int) (shown []core.Match, total int, err error)

// PeriodEnd ends the open digest period of a channel that leaves its
// digest (ChannelStore.UpdateChannelPeriod, AttemptRules.EndPeriod):
// given the channel, its schedule and period as they stood, and read, it
// returns the period's
// end, the channel's LastDigestAt from then on, and the period's digest,
// nil when it had no match. The store calls it under the channel's row
// lock, in the transaction that stores the change, once the scoring
// under way has been stored and with later scoring held until that
// transaction ends: a match is scored before the end and read, or after
// the change, by scoring that reads the channel as it now stands.
type PeriodEnd func(ch core.Webhook, read DigestRead) (end time.Time, digest *core.Delivery, err error)

// NewChannel is what an owner gives for a new channel. MinScore nil
// means core.DefaultWebhookMinScore, Platforms nil every platform, an
// empty Frequency at once; Hour and Zone are read for a daily digest.
type NewChannel struct {
	Kind, URL, Token, ChatID string
	MinScore                 *int
	Platforms                []string
	Frequency                string
	Hour                     int
	Zone                     string
}

// ChannelChange is a change an owner asks for; nil fields stay as they
// are. URL, Token and ChatID each replace that part of the destination
// (an empty Token takes an ntfy access token away); the kind never
// changes. Hour and Zone without Frequency change a daily digest's time.
type ChannelChange struct {
	Active             *bool
	MinScore           *int
	Platforms          []string // nil: unchanged; otherwise a non-empty list of platforms
	Frequency          *string
	Hour               *int
	Zone               *string
	URL, Token, ChatID *string
}
