package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// WebhookConfig is the subscription service's part of the settings.
type WebhookConfig struct {
	Limits core.Limits
	// AllowPrivate applies the relaxed address rules of local development
	// when a webhook is saved; the sender applies its own at each send.
	AllowPrivate bool
}

// WebhookDeps are the ports the subscription service uses.
type WebhookDeps struct {
	Store  ports.WebhookStore
	Sender ports.WebhookSender // sends test pings
	Sealer *core.Sealer
	Clock  ports.Clock
	Log    *slog.Logger
	// Metrics counts pings sent; nil counts nothing.
	Metrics ports.Metrics
	// Owners counts the deployment's owners, so that a plan without
	// webhooks names its setting to an owner who runs the deployment
	// alone; nil sends every owner to the operator.
	Owners ports.OwnerStore
	// Wake tells the delivery worker that queued deliveries may be due
	// now (DeliveryWorker.Poke): a webhook switched on, a manual retry.
	// Nil leaves them to its poll.
	Wake func()
	// Off tells the delivery worker that a webhook was switched off or
	// deleted (DeliveryWorker.Off), so it sends none of what it holds
	// for it. Nil leaves those to go out.
	Off func(id string)
}

// Webhooks manages owners' webhook subscriptions: create, list, change,
// delete, the delivery log, test pings, manual retries, secret rotation
// and replays. Sending the
// queued deliveries is the DeliveryWorker's.
type Webhooks struct {
	deps WebhookDeps
	cfg  WebhookConfig
	msg  messenger
}

// NewWebhooks returns the subscription service.
func NewWebhooks(deps WebhookDeps, cfg WebhookConfig) *Webhooks {
	deps.Clock = orSystemClock(deps.Clock)
	deps.Log = orDefaultLog(deps.Log)
	deps.Metrics = orNoMetrics(deps.Metrics)
	if deps.Wake == nil {
		deps.Wake = func() {}
	}
	if deps.Off == nil {
		deps.Off = func(string) {}
	}
	return &Webhooks{deps: deps, cfg: cfg, msg: messenger{sender: deps.Sender, sealer: deps.Sealer, metrics: deps.Metrics}}
}

// Gate is the plan's refusal of webhooks (KindPlanLimit), or nil: what
// refuses a route that adds a webhook or sends a message (create, test,
// retry, rotate-secret, replay). The API asks it before it reads such a
// route's body.
func (s *Webhooks) Gate(ctx context.Context) error { return s.gate(ctx) }

// Keep is the plan's refusal of the routes that read, change, switch
// and delete what the owner has (KindPlanLimit), or nil: as Gate, but
// nil for an owner who still has webhooks or channels. The API asks it
// before it reads such a route's body.
func (s *Webhooks) Keep(ctx context.Context, ownerID string) error {
	_, err := s.kept(ctx, ownerID)
	return err
}

// gate refuses when the plan has no webhooks (kept lets an owner who
// still has some past it). The owners are counted only then, to word
// the refusal.
func (s *Webhooks) gate(ctx context.Context) error {
	if s.cfg.Limits.CheckWebhooks(core.Usage{}) == nil {
		return nil
	}
	var u core.Usage
	if s.deps.Owners != nil {
		n, err := s.deps.Owners.CountOwners(ctx)
		if err != nil {
			return err
		}
		u.Owners = n
	}
	return s.cfg.Limits.CheckWebhooks(u)
}

// kept is gate for what an owner already has, and returns the owner's
// webhooks and channels, oldest first. A plan without webhooks refuses
// only an owner who has none: limits refuse new things (spec, section
// 8), and an operator who lowers the limit to 0 leaves the rows made
// before sending, so their owner must still be able to see them, switch
// them off, change them and delete them.
func (s *Webhooks) kept(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	refused := s.gate(ctx)
	if refused != nil && !core.IsKind(refused, core.KindPlanLimit) {
		return nil, refused
	}
	all, err := s.deps.Store.Webhooks(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	if refused != nil && len(all) == 0 {
		return nil, refused
	}
	return all, nil
}

// Create validates and adds a webhook and returns it with its signing
// secret, which is shown this once: the store keeps it sealed. minScore
// nil means core.DefaultWebhookMinScore, platforms nil every platform.
// KindInvalid names the field; KindConflict for a URL the owner has;
// KindPlanLimit.
func (s *Webhooks) Create(ctx context.Context, ownerID, url string, minScore *int, platforms []string) (core.Webhook, string, error) {
	if err := s.gate(ctx); err != nil {
		return core.Webhook{}, "", err
	}
	u, err := core.CheckWebhookURL(url, s.cfg.AllowPrivate)
	if err != nil {
		return core.Webhook{}, "", err
	}
	ps, err := checkFilters(minScore, platforms)
	if err != nil {
		return core.Webhook{}, "", err
	}
	w := core.Webhook{OwnerID: ownerID, URL: u, MinScore: core.DefaultWebhookMinScore, Platforms: slices.Clone(core.Platforms), Active: true}
	w = changed(w, nil, minScore, ps)
	secret, err := core.NewWebhookSecret()
	if err != nil {
		return core.Webhook{}, "", err
	}
	seal := func(id string) ([]byte, error) { return s.deps.Sealer.Seal([]byte(secret), []byte(id)) }
	if err := s.deps.Store.CreateWebhook(ctx, &w, s.cfg.Limits.CheckNewWebhook, seal); err != nil {
		return core.Webhook{}, "", err
	}
	return w, secret, nil
}

// checkFilters checks the filters a webhook or a channel is given, on
// create or change, and returns the platforms parsed: nil when not given.
func checkFilters(minScore *int, platforms []string) ([]core.Platform, error) {
	if minScore != nil {
		if err := core.CheckWebhookMinScore(*minScore); err != nil {
			return nil, err
		}
	}
	if platforms == nil {
		return nil, nil
	}
	return parsePlatforms(platforms)
}

// changed is w with what a webhook's and a channel's change share:
// switched on (forgetting its failures) or off, and its filters, each
// when given.
func changed(w core.Webhook, active *bool, minScore *int, platforms []core.Platform) core.Webhook {
	if active != nil {
		if *active {
			w = w.Enable()
		} else {
			w.Active, w.DisabledReason = false, ""
		}
	}
	if minScore != nil {
		w.MinScore = *minScore
	}
	if platforms != nil {
		w.Platforms = platforms
	}
	return w
}

// parsePlatforms checks a non-empty list of platforms and returns it
// without repeats, in the order core.Platforms lists them.
func parsePlatforms(list []string) ([]core.Platform, error) {
	if len(list) == 0 {
		return nil, core.Errorf(core.KindInvalid, "platforms must name at least one of reddit, x, facebook")
	}
	var out []core.Platform
	for _, v := range list {
		p, err := core.ParsePlatform("platforms", v)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b core.Platform) int {
		return slices.Index(core.Platforms, a) - slices.Index(core.Platforms, b)
	})
	return out, nil
}

// List returns the owner's webhooks, oldest first, channels left out.
// KindPlanLimit (as Keep).
func (s *Webhooks) List(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	return s.list(ctx, ownerID, false)
}

// list returns the owner's webhooks or channels, oldest first.
func (s *Webhooks) list(ctx context.Context, ownerID string, channels bool) ([]core.Webhook, error) {
	all, err := s.kept(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(w core.Webhook) bool { return w.Kind.IsChannel() != channels }), nil
}

// ofKind is KindNotFound unless w is a channel when channel is set, and
// a webhook when not: the spec's webhook routes see webhooks only, and
// the channel routes channels only, though both are rows of one table.
func ofKind(w core.Webhook, channel bool) error {
	if w.Kind.IsChannel() == channel {
		return nil
	}
	return notFound(channel)
}

func notFound(channel bool) error {
	if channel {
		return core.Errorf(core.KindNotFound, "channel not found")
	}
	return core.Errorf(core.KindNotFound, "webhook not found")
}

// own reads the owner's webhook or channel id, KindNotFound when it is
// of the other kind.
func (s *Webhooks) own(ctx context.Context, ownerID, id string, channel bool) (core.Webhook, error) {
	w, _, err := s.deps.Store.Webhook(ctx, ownerID, id)
	if err != nil {
		return core.Webhook{}, named(err, channel)
	}
	return w, ofKind(w, channel)
}

// named words the store's "webhook not found" for a channel route.
func named(err error, channel bool) error {
	if channel && core.IsKind(err, core.KindNotFound) && core.Message(err) == "webhook not found" {
		return notFound(true)
	}
	return err
}

// Update switches a webhook on or off and changes its filters. Switching
// it on forgets its failures and the reason it was switched off; its
// queued deliveries then go out. KindInvalid, KindNotFound,
// KindPlanLimit (as Keep).
func (s *Webhooks) Update(ctx context.Context, ownerID, id string, ch ports.WebhookChange) (core.Webhook, error) {
	if err := s.Keep(ctx, ownerID); err != nil {
		return core.Webhook{}, err
	}
	if ch.Active == nil && ch.MinScore == nil && ch.Platforms == nil {
		return core.Webhook{}, core.Errorf(core.KindInvalid, "send at least one of active, min_score, platforms")
	}
	platforms, err := checkFilters(ch.MinScore, ch.Platforms)
	if err != nil {
		return core.Webhook{}, err
	}
	w, err := s.deps.Store.UpdateWebhook(ctx, ownerID, id, func(w core.Webhook) (core.Webhook, error) {
		if err := ofKind(w, false); err != nil {
			return w, err
		}
		return changed(w, ch.Active, ch.MinScore, platforms), nil
	})
	switch {
	case err == nil && w.Active:
		s.deps.Wake()
	case err == nil:
		s.deps.Off(w.ID)
	}
	return w, err
}

// Delete removes a webhook and its delivery log. KindNotFound,
// KindPlanLimit (as Keep).
func (s *Webhooks) Delete(ctx context.Context, ownerID, id string) error {
	return s.delete(ctx, ownerID, id, false)
}

// delete removes a webhook or a channel; its kind never changes, so a
// read before is as good as one inside.
func (s *Webhooks) delete(ctx context.Context, ownerID, id string, channel bool) error {
	if err := s.Keep(ctx, ownerID); err != nil {
		return err
	}
	if _, err := s.own(ctx, ownerID, id, channel); err != nil {
		return err
	}
	if err := s.deps.Store.DeleteWebhook(ctx, ownerID, id); err != nil {
		return named(err, channel)
	}
	s.deps.Off(id)
	return nil
}

// Deliveries returns the webhook's log, newest first. KindNotFound,
// KindPlanLimit (as Keep).
func (s *Webhooks) Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error) {
	return s.deliveries(ctx, ownerID, id, false)
}

func (s *Webhooks) deliveries(ctx context.Context, ownerID, id string, channel bool) ([]core.Delivery, error) {
	if err := s.Keep(ctx, ownerID); err != nil {
		return nil, err
	}
	if _, err := s.own(ctx, ownerID, id, channel); err != nil {
		return nil, err
	}
	ds, err := s.deps.Store.Deliveries(ctx, ownerID, id, core.DeliveryLogSize)
	return ds, named(err, channel)
}

// Test sends one signed ping now, through the same sender as every
// message, and reports what the receiver answered. The ping is recorded
// in the log with trigger ping; it gets one try and never counts toward
// switching the webhook off. It works on a switched-off webhook too, so
// an owner can check a fixed receiver before switching it on. take is
// the caller's count of the send against its limit, called once the
// checks pass and just before the send, and its error refuses it; a nil
// take counts nothing and sets no limit. KindNotFound, KindPlanLimit, or
// take's error.
func (s *Webhooks) Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := s.gate(ctx); err != nil {
		return ports.WebhookResult{}, err
	}
	w, sealed, err := s.deps.Store.WebhookSecrets(ctx, ownerID, id)
	if err == nil {
		err = ofKind(w, false)
	}
	if err != nil {
		return ports.WebhookResult{}, err
	}
	now := s.deps.Clock.Now()
	d, err := s.msg.ping(w, s.deps.Store.NewDeliveryID(), now)
	if err != nil {
		return ports.WebhookResult{}, err
	}
	if err := spend(ctx, take); err != nil {
		return ports.WebhookResult{}, err
	}
	res, err := s.msg.send(ctx, w, sealed.Current, sealed.Previous, d, now)
	if err != nil {
		return ports.WebhookResult{}, core.Wrap(core.KindInternal, err, "the webhook's signing secret cannot be opened")
	}
	d = d.Attempted(nil, res.Status, res.Error, s.deps.Clock.Now(), 0)
	// The caller gets the answer whatever happens to the log entry: it is
	// what was asked for, and the ping has gone out.
	if err := s.deps.Store.AddDelivery(context.WithoutCancel(ctx), d, core.DeliveryLogSize); err != nil {
		s.deps.Log.WarnContext(ctx, "recording a webhook ping failed", "webhook", w.ID, "err", err)
	}
	return res, nil
}

// Retry sends a delivered or failed message again, with the same
// delivery id and body: it is queued with trigger manual and a fresh set
// of tries. (A chat channel's match message is written again from its
// match, and goes out at the channel's next slot with the others due
// then: Channels.Retry.) take is the caller's count of the send, called
// once the checks pass, before anything is queued (nil: no limit).
// KindNotFound; KindConflict while the delivery is still queued
// or the webhook is switched off; KindInvalidRequest for a test ping;
// KindPlanLimit; take's error.
func (s *Webhooks) Retry(ctx context.Context, ownerID, webhookID, deliveryID string, take func(context.Context) error) (core.Delivery, error) {
	return s.retry(ctx, ownerID, webhookID, deliveryID, false, take)
}

// errChecked ends a change that only checks: nothing is stored.
var errChecked = errors.New("checked")

func (s *Webhooks) retry(ctx context.Context, ownerID, webhookID, deliveryID string, channel bool, take func(context.Context) error) (core.Delivery, error) {
	if err := s.gate(ctx); err != nil {
		return core.Delivery{}, err
	}
	w, err := s.own(ctx, ownerID, webhookID, channel)
	if err != nil {
		return core.Delivery{}, err
	}
	what, test := "webhook", "POST /webhooks/{id}/test"
	if channel {
		what, test = "channel", "POST /channels/{id}/test"
	}
	now := s.deps.Clock.Now()
	// The delivery is looked up first: an unknown one is not found,
	// whatever the webhook's state.
	queue := func(d core.Delivery) (core.Delivery, error) {
		switch {
		case !w.Active:
			return d, core.Errorf(core.KindConflict, "the %s is switched off: switch it on with PATCH {\"active\": true} first", what)
		case d.Trigger == core.TriggerPing:
			return d, core.Errorf(core.KindInvalidRequest, "a test ping is not sent again: call %s", test)
		case !d.Status.Final():
			return d, core.Errorf(core.KindConflict, "the delivery is queued already")
		}
		d.Trigger, d.Status, d.Tries = core.TriggerManual, core.DeliveryQueued, 0
		d.ResponseStatus, d.Error, d.NextAttemptAt = 0, "", w.DueAt(now)
		return d, nil
	}
	// The checks run once in a change that stores nothing, then the send
	// is taken, then they run again as the delivery is queued: the take
	// is not made inside the store's transaction, where a limiter kept in
	// the same database would wait for a connection of the pool the
	// transaction holds one of.
	_, err = s.deps.Store.UpdateDelivery(ctx, ownerID, webhookID, deliveryID, func(d core.Delivery) (core.Delivery, error) {
		if _, err := queue(d); err != nil {
			return d, err
		}
		return d, errChecked
	})
	if !errors.Is(err, errChecked) {
		if err == nil {
			err = core.Errorf(core.KindInternal, "the store stored a change that only checked")
		}
		return core.Delivery{}, err
	}
	if err := spend(ctx, take); err != nil {
		return core.Delivery{}, err
	}
	// The row is read again: one switched off during the take refuses
	// the redelivery rather than leave it queued behind the switch.
	if w, err = s.own(ctx, ownerID, webhookID, channel); err != nil {
		return core.Delivery{}, err
	}
	d, err := s.deps.Store.UpdateDelivery(ctx, ownerID, webhookID, deliveryID, queue)
	if err != nil {
		return core.Delivery{}, err
	}
	s.deps.Wake()
	return d, nil
}

// spend calls take, the caller's count of one send (a test, a
// redelivery, a replay) against its limit, once the service has decided
// to send: a request the service refuses counts nothing. Its error
// (KindRateLimited past the limit) refuses the send and is returned as
// is. A nil take counts nothing. Between the checks and the send only a
// change made meanwhile (the row switched off, the same delivery
// redelivered) can refuse it; such a request has been counted.
func spend(ctx context.Context, take func(context.Context) error) error {
	if take == nil {
		return nil
	}
	return take(ctx)
}

// RotateSecret gives a webhook a new signing secret and returns it, shown
// this once: the store keeps it sealed. The replaced secret keeps
// signing every message beside the new one for overlap (nil means
// core.DefaultSecretOverlap; 0 stops it at once), so receivers switch at
// their own pace: webhook-signature then carries both values, the new
// first, and X-Service-Signature, one value in the spec, the new
// secret's. A secret replaced by an earlier rotation stops at once.
// KindInvalid for an overlap outside 0 to 7 days; KindNotFound;
// KindPlanLimit.
func (s *Webhooks) RotateSecret(ctx context.Context, ownerID, id string, overlap *time.Duration) (core.Webhook, string, error) {
	if err := s.gate(ctx); err != nil {
		return core.Webhook{}, "", err
	}
	if _, err := s.own(ctx, ownerID, id, false); err != nil {
		return core.Webhook{}, "", err // a channel has no signing secret
	}
	o := core.DefaultSecretOverlap
	if overlap != nil {
		o = *overlap
	}
	until, err := core.SecretOverlapEnd(s.deps.Clock.Now(), o)
	if err != nil {
		return core.Webhook{}, "", err
	}
	secret, err := core.NewWebhookSecret()
	if err != nil {
		return core.Webhook{}, "", err
	}
	seal := func(id string) ([]byte, error) { return s.deps.Sealer.Seal([]byte(secret), []byte(id)) }
	w, err := s.deps.Store.RotateSecret(ctx, ownerID, id, until, seal)
	if err != nil {
		return core.Webhook{}, "", err
	}
	return w, secret, nil
}

// Replay queues again the webhook's failed messages made from from up to
// to (zero: now), oldest first, at most core.MaxReplay a call: each as a
// new delivery with its own id, the same event and match, trigger replay
// and a fresh set of tries, sent by the delivery worker at once. A match
// whose replay is queued or went through is passed over, so the same
// call again takes what is left; the result says whether more remain.
// take is the caller's count of the replay, called once the range and
// the webhook are checked, before anything is queued, whatever the range
// then holds (nil: no limit).
// KindInvalid for a range that is not one; KindConflict when the webhook
// is switched off; KindNotFound; KindPlanLimit; take's error.
func (s *Webhooks) Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	return s.replay(ctx, ownerID, id, from, to, false, take)
}

func (s *Webhooks) replay(ctx context.Context, ownerID, id string, from, to time.Time, channel bool, take func(context.Context) error) (ports.ReplayResult, error) {
	if err := s.gate(ctx); err != nil {
		return ports.ReplayResult{}, err
	}
	if to.IsZero() {
		to = s.deps.Clock.Now()
	}
	if err := core.CheckReplayRange(from, to); err != nil {
		return ports.ReplayResult{}, err
	}
	plan := func(w core.Webhook, failed []core.Delivery, at time.Time) ([]core.Delivery, error) {
		if err := ofKind(w, channel); err != nil {
			return nil, err
		}
		out, err := core.ReplayFailed(w, failed, at)
		if channel && core.IsKind(err, core.KindConflict) {
			err = core.Errorf(core.KindConflict, "the channel is switched off: switch it on first, then replay")
		}
		return out, err
	}
	// The row is checked before the take and again under its lock, as a
	// redelivery is (retry).
	w, err := s.own(ctx, ownerID, id, channel)
	if err != nil {
		return ports.ReplayResult{}, err
	}
	if _, err := plan(w, nil, to); err != nil {
		return ports.ReplayResult{}, err
	}
	if err := spend(ctx, take); err != nil {
		return ports.ReplayResult{}, err
	}
	res, err := s.deps.Store.ReplayDeliveries(ctx, ownerID, id, ports.ReplayQuery{From: from, To: to, Limit: core.MaxReplay}, plan)
	if err != nil {
		return ports.ReplayResult{}, named(err, channel)
	}
	if len(res.Queued) > 0 {
		s.deps.Wake()
	}
	return res, nil
}
