package app

import (
	"context"
	"slices"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// ChannelDeps are what the channel service uses beside the subscription
// service, whose store, sealer, clock, plan gate and wake-up it shares.
type ChannelDeps struct {
	Webhooks *Webhooks
	Store    ports.ChannelStore
	// Sender sends test messages; nil means the webhook service's
	// sender, when it sends channel messages too.
	Sender ports.ChannelSender
	// Digests gives the address the digest links to when its owner takes
	// a channel off its digest, which ends the open period as the sweep
	// ends one that is due, so the two write a digest alike. Nil means one
	// on Store with the webhook service's clock, log and wake-up, whose
	// digests link nowhere.
	Digests *ChannelDigests
}

// Channels manages owners' channels: Slack, Discord, Telegram and ntfy
// destinations with a webhook's filters and a frequency. A channel is a
// webhook row of another kind, so it shares the webhooks' plan limit,
// delivery queue, tries, switch-off and delivery log; what it carries as
// a secret (core.ChannelTarget) is sealed where a webhook's signing
// secret is, and only its redacted form is ever shown.
type Channels struct {
	w       *Webhooks
	store   ports.ChannelStore
	msg     messenger
	digests *ChannelDigests
}

// NewChannels returns the channel service.
func NewChannels(deps ChannelDeps) *Channels {
	msg := deps.Webhooks.msg
	msg.channels = channelSender(deps.Sender, deps.Webhooks.deps.Sender)
	if deps.Digests == nil {
		wd := deps.Webhooks.deps
		deps.Digests = NewChannelDigests(ChannelDigestDeps{Store: deps.Store, Clock: wd.Clock, Log: wd.Log, Wake: wd.Wake})
	}
	return &Channels{w: deps.Webhooks, store: deps.Store, msg: msg, digests: deps.Digests}
}

// emptyChange reports whether c asks for nothing.
func emptyChange(c ports.ChannelChange) bool {
	return c.Active == nil && c.MinScore == nil && c.Platforms == nil && c.Frequency == nil && c.Hour == nil && c.Zone == nil &&
		c.URL == nil && c.Token == nil && c.ChatID == nil
}

// channelSchedule validates a channel's frequency; off is refused with
// its own reason (core.NewChannelSchedule), anything else unknown with
// the channel's choices.
func channelSchedule(frequency string, hour int, zone string) (core.AlertSchedule, error) {
	switch core.AlertFrequency(frequency) {
	case "", core.AlertAtOnce, core.AlertHourly, core.AlertDaily, core.AlertOff:
		return core.NewChannelSchedule(frequency, hour, zone)
	}
	return core.AlertSchedule{}, core.Errorf(core.KindInvalid, "frequency must be one of at once, hourly, daily")
}

// Create validates and adds a channel and returns it; its URL is the
// destination's redacted form. KindInvalid names the field, and never
// repeats a token; KindPlanLimit when the plan's webhook limit, which
// webhooks and channels share, is reached.
func (s *Channels) Create(ctx context.Context, ownerID string, in ports.NewChannel) (core.Webhook, error) {
	if err := s.w.gate(ctx); err != nil {
		return core.Webhook{}, err
	}
	kind, err := core.ParseChannelKind(in.Kind)
	if err != nil {
		return core.Webhook{}, err
	}
	target, err := core.CheckChannelTarget(core.ChannelTarget{Kind: kind, URL: in.URL, Token: in.Token, ChatID: in.ChatID}, s.w.cfg.AllowPrivate)
	if err != nil {
		return core.Webhook{}, err
	}
	ps, err := checkFilters(in.MinScore, in.Platforms)
	if err != nil {
		return core.Webhook{}, err
	}
	w := core.Webhook{OwnerID: ownerID, Kind: kind, URL: target.Redacted(), MinScore: core.DefaultWebhookMinScore,
		Platforms: slices.Clone(core.Platforms), Active: true}
	w = changed(w, nil, in.MinScore, ps)
	if w.Schedule, err = channelSchedule(in.Frequency, in.Hour, in.Zone); err != nil {
		return core.Webhook{}, err
	}
	if w.Schedule.Digest() {
		// The first period starts now: the first hourly digest goes out in
		// an hour, the first daily one at the next chosen hour.
		w.LastDigestAt = s.w.deps.Clock.Now()
	}
	plain, err := core.MarshalTarget(target)
	if err != nil {
		return core.Webhook{}, err
	}
	seal := func(id string) ([]byte, error) { return s.w.deps.Sealer.Seal(plain, []byte(id)) }
	if err := s.store.CreateChannel(ctx, &w, s.w.cfg.Limits.CheckNewWebhook, seal); err != nil {
		return core.Webhook{}, err
	}
	return w, nil
}

// List returns the owner's channels, oldest first. KindPlanLimit.
func (s *Channels) List(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	return s.w.list(ctx, ownerID, true)
}

// All returns the owner's webhooks and channels together, oldest first,
// each with its Kind: the dashboard's one list. KindPlanLimit (as
// Webhooks.Keep).
func (s *Channels) All(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	return s.w.kept(ctx, ownerID)
}

// Get returns one channel. KindNotFound, KindPlanLimit (as
// Webhooks.Keep).
func (s *Channels) Get(ctx context.Context, ownerID, id string) (core.Webhook, error) {
	if err := s.w.Keep(ctx, ownerID); err != nil {
		return core.Webhook{}, err
	}
	return s.w.own(ctx, ownerID, id, true)
}

// changedSchedule is the schedule ch gives w, w's own when ch changes
// none of frequency, hour and zone.
func changedSchedule(w core.Webhook, ch ports.ChannelChange) (core.AlertSchedule, error) {
	if ch.Frequency == nil && ch.Hour == nil && ch.Zone == nil {
		return w.Schedule, nil
	}
	if ch.Frequency == nil && w.Schedule.Frequency != core.AlertDaily {
		// Only a daily schedule keeps them: the change would be dropped
		// while the answer says it was made.
		return w.Schedule, core.Errorf(core.KindInvalid, "hour and zone are for a daily channel: send them with frequency daily")
	}
	freq, hour, zone := string(w.Schedule.Frequency), w.Schedule.Hour, w.Schedule.Zone
	if ch.Frequency != nil {
		freq = *ch.Frequency
	}
	if ch.Hour != nil {
		hour = *ch.Hour
	}
	if ch.Zone != nil {
		zone = *ch.Zone
	}
	return channelSchedule(freq, hour, zone)
}

// Update changes a channel: switched on or off (on forgets its failures,
// as for a webhook), its filters, its frequency, its destination. A
// channel put on a digest, or switched on while on one, starts its
// period then: a digest gathers what was scored while the channel was on
// and on a digest, none of what an at-once message already carried. A
// channel its owner takes off its digest (to at once, or switched off)
// ends its open period with the change, in one transaction, with a
// digest when the period had matches; switched off, the channel keeps
// that digest queued until it is on again, as it keeps its at-once
// messages. Scoring that read the channel as on its digest is in that
// digest, and scoring after reads the change.
// KindInvalid, KindNotFound, KindPlanLimit (as Webhooks.Keep).
func (s *Channels) Update(ctx context.Context, ownerID, id string, ch ports.ChannelChange) (core.Webhook, error) {
	if err := s.w.Keep(ctx, ownerID); err != nil {
		return core.Webhook{}, err
	}
	if emptyChange(ch) {
		return core.Webhook{}, core.Errorf(core.KindInvalid, "send at least one of active, min_score, platforms, frequency, hour, zone, url, token, chat_id")
	}
	platforms, err := checkFilters(ch.MinScore, ch.Platforms)
	if err != nil {
		return core.Webhook{}, err
	}
	now := s.w.deps.Clock.Now()
	end := periodEnd(s.w.deps.Clock, s.digests.site)
	w, err := s.store.UpdateChannelPeriod(ctx, ownerID, id, func(w core.Webhook, sealed []byte) (core.Webhook, []byte, error) {
		was := w
		sched, err := changedSchedule(w, ch)
		if err != nil {
			return w, nil, err
		}
		w.Schedule = sched
		var resealed []byte
		if ch.URL != nil || ch.Token != nil || ch.ChatID != nil {
			t, err := s.newTarget(w, sealed, ch)
			if err != nil {
				return w, nil, err
			}
			plain, err := core.MarshalTarget(t)
			if err != nil {
				return w, nil, err
			}
			if resealed, err = s.w.deps.Sealer.Seal(plain, []byte(w.ID)); err != nil {
				return w, nil, err
			}
			w.URL = t.Redacted()
		}
		w = changed(w, ch.Active, ch.MinScore, platforms)
		// A channel moved from one digest to another keeps its period:
		// what was scored since its last digest was scored while it was on
		// and on a digest, and no other digest will carry it.
		if w.Schedule.Digest() && (!was.Schedule.Digest() || w.Active && !was.Active) {
			w.LastDigestAt = now
		}
		return w, resealed, nil
	}, end, core.DeliveryLogSize)
	if err != nil {
		return core.Webhook{}, named(err, true)
	}
	if w.Active {
		s.w.deps.Wake()
	} else {
		s.w.deps.Off(w.ID)
	}
	return w, nil
}

// Gate is the plan's refusal of channels, which count as webhooks, for
// what adds one or sends a message (Webhooks.Gate).
func (s *Channels) Gate(ctx context.Context) error { return s.w.gate(ctx) }

// Keep is the plan's refusal of what reads, changes, switches or deletes
// the owner's channels (Webhooks.Keep).
func (s *Channels) Keep(ctx context.Context, ownerID string) error { return s.w.Keep(ctx, ownerID) }

// newTarget is w's destination with the parts ch gives, checked.
func (s *Channels) newTarget(w core.Webhook, sealed []byte, ch ports.ChannelChange) (core.ChannelTarget, error) {
	t, err := s.open(w, sealed)
	if err != nil {
		return t, err
	}
	if ch.URL != nil {
		t.URL = *ch.URL
	}
	if ch.Token != nil {
		t.Token = *ch.Token
	}
	if ch.ChatID != nil {
		t.ChatID = *ch.ChatID
	}
	return core.CheckChannelTarget(t, s.w.cfg.AllowPrivate)
}

// open opens a channel's sealed destination.
func (s *Channels) open(w core.Webhook, sealed []byte) (core.ChannelTarget, error) {
	plain, err := s.w.deps.Sealer.Open(sealed, []byte(w.ID))
	if err != nil {
		return core.ChannelTarget{}, core.Wrap(core.KindInternal, err, "the channel's destination cannot be opened")
	}
	t, err := core.UnmarshalTarget(plain)
	if err != nil {
		return core.ChannelTarget{}, core.Wrap(core.KindInternal, err, "the channel's destination cannot be read")
	}
	return t, nil
}

// Delete removes a channel and its delivery log. KindNotFound,
// KindPlanLimit (as Webhooks.Keep).
func (s *Channels) Delete(ctx context.Context, ownerID, id string) error {
	return s.w.delete(ctx, ownerID, id, true)
}

// Deliveries returns the channel's log, newest first. KindNotFound,
// KindPlanLimit (as Webhooks.Keep).
func (s *Channels) Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error) {
	return s.w.deliveries(ctx, ownerID, id, true)
}

// Test sends the channel's test message now (core.RenderChannelTest)
// through the same sender as every message, and reports what the service
// answered. As a webhook's ping, it is recorded in the log with trigger
// ping, gets one try, never counts toward switching the channel off, and
// works on a channel switched off. take is the caller's count of the
// send, as for a webhook's (nil: no limit). KindNotFound, KindPlanLimit,
// take's error.
func (s *Channels) Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := s.w.gate(ctx); err != nil {
		return ports.WebhookResult{}, err
	}
	w, sealed, err := s.w.deps.Store.WebhookSecrets(ctx, ownerID, id)
	if err == nil {
		err = ofKind(w, true)
	}
	if err != nil {
		return ports.WebhookResult{}, named(err, true)
	}
	now := s.w.deps.Clock.Now()
	body, err := core.RenderChannelTest(w.Kind, now)
	if err != nil {
		return ports.WebhookResult{}, err
	}
	d := core.Delivery{ID: s.w.deps.Store.NewDeliveryID(), WebhookID: w.ID, OwnerID: w.OwnerID, Event: core.EventPing,
		Trigger: core.TriggerPing, Status: core.DeliveryQueued, Payload: body, CreatedAt: now}
	if err := spend(ctx, take); err != nil {
		return ports.WebhookResult{}, err
	}
	res, err := s.msg.sendChannel(ctx, w, sealed.Current, d, 1)
	if err != nil {
		return ports.WebhookResult{}, core.Wrap(core.KindInternal, err, "the channel's destination cannot be opened")
	}
	d = d.Attempted(nil, res.Status, res.Error, s.w.deps.Clock.Now(), 0)
	if err := s.w.deps.Store.AddDelivery(context.WithoutCancel(ctx), d, core.DeliveryLogSize); err != nil {
		s.w.deps.Log.WarnContext(ctx, "recording a channel's test message failed", "channel", w.ID, "err", err)
	}
	return res, nil
}

// Retry sends a delivered or failed message of the channel again, as
// Webhooks.Retry does a webhook's (a digest too: its body is kept). A
// match's message falls due at the channel's next slot and is written
// again from the match, with whatever else of the channel is due then.
// take is the caller's count of the send, as for a webhook's (nil: no
// limit); its error refuses the redelivery.
func (s *Channels) Retry(ctx context.Context, ownerID, channelID, deliveryID string, take func(context.Context) error) (core.Delivery, error) {
	return s.w.retry(ctx, ownerID, channelID, deliveryID, true, take)
}

// Replay queues again the channel's failed match messages of a range, as
// Webhooks.Replay does a webhook's, due at the channel's next slot: they
// go out together, as one message. A digest gathers no single match and
// is not replayed; Retry sends a failed one again. take is the caller's
// count of the replay, as for a webhook's (nil: no limit); its error
// refuses the replay.
func (s *Channels) Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	return s.w.replay(ctx, ownerID, id, from, to, true, take)
}
