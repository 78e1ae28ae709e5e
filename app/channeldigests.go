package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// DefaultDigestSweep is how often the digest sweep looks for channels
// whose digest is due: a daily digest goes out within this of its hour.
const DefaultDigestSweep = time.Minute

// ChannelDigestDeps are the ports the digest sweep uses.
type ChannelDigestDeps struct {
	Store ports.ChannelStore
	Clock ports.Clock
	Log   *slog.Logger
	// Wake tells the delivery worker that a digest is queued
	// (DeliveryWorker.Poke); nil leaves it to its poll.
	Wake func()
	// SiteURL gives the public address a digest links to for the rest,
	// read at each digest: the server knows it once it listens. Nil
	// links nowhere.
	SiteURL func() string
}

// ChannelDigests queues the digests of channels on an hourly or daily
// frequency: for each channel whose digest is due (core.DigestDue), one
// delivery of the period's matches the channel wants, strongest first,
// the rest counted; none when the period had none. The delivery worker
// sends it as any other, with the same tries, switch-off and log.
type ChannelDigests struct {
	store ports.ChannelStore
	clock ports.Clock
	log   *slog.Logger
	wake  func()
	site  func() string
}

// NewChannelDigests returns the digest sweep.
func NewChannelDigests(d ChannelDigestDeps) *ChannelDigests {
	if d.Wake == nil {
		d.Wake = func() {}
	}
	if d.SiteURL == nil {
		d.SiteURL = func() string { return "" }
	}
	return &ChannelDigests{store: d.Store, clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log), wake: d.Wake, site: d.SiteURL}
}

// Sweep queues every digest due now and returns how many it queued. The
// store ends each period once, whichever replica comes first; a channel
// whose digest fails to render or store is left for the next sweep,
// its period unchanged.
func (s *ChannelDigests) Sweep(ctx context.Context) (int, error) {
	chans, err := s.store.DigestChannels(ctx)
	if err != nil {
		return 0, err
	}
	// One end for every period the sweep closes, so that the store's
	// wait for the scoring under way (DigestMatches) is one a sweep, not
	// one a channel.
	now := s.clock.Now()
	queued := 0
	for _, ch := range chans {
		if err := ctx.Err(); err != nil {
			return queued, err
		}
		ok, err := s.channel(ctx, ch, now)
		if err != nil {
			s.log.WarnContext(ctx, "a channel's digest was not queued; the next sweep tries again", "channel", ch.ID, "err", err)
			continue
		}
		if ok {
			queued++
		}
	}
	if queued > 0 {
		s.wake()
	}
	return queued, nil
}

// channel ends ch's digest period if it is due, queuing the period's
// digest when it had matches, and reports whether it queued one. The
// store refuses the end, with no error, when another replica ended the
// period first, or the channel is no longer active and on a digest.
func (s *ChannelDigests) channel(ctx context.Context, ch core.Webhook, now time.Time) (bool, error) {
	if quiet, at, err := s.quietHour(ctx, ch, now); err != nil || quiet {
		if err != nil {
			return false, err
		}
		// The hour had nothing to send: its period ends there, empty, and
		// what came since waits for the next one, as for email alerts.
		_, err := s.store.AddDigest(ctx, ch, at, nil, core.DeliveryLogSize)
		return false, err
	}
	due, d, err := digestOf(ch, now, false, s.site, func(from, to time.Time, limit int) ([]core.Match, int, error) {
		return s.store.DigestMatches(ctx, ch, from, to, limit)
	})
	if err != nil || !due {
		return false, err
	}
	ok, err := s.store.AddDigest(ctx, ch, now, d, core.DeliveryLogSize)
	return ok && d != nil, err
}

// quietHour reports whether ch's daily digest is due now only because no
// sweep came within its hour (the service was down), and its period had
// no match by that hour, which is at: what came after the hour waits
// for the next day's, as it does when a sweep finds the hour empty. A
// digest the hour missed goes out late; one it would not have sent, not.
func (s *ChannelDigests) quietHour(ctx context.Context, ch core.Webhook, now time.Time) (bool, time.Time, error) {
	at := ch.Schedule.DailyHourBefore(now)
	if at.IsZero() || now.Sub(at) < time.Hour {
		return false, at, nil
	}
	due, from := core.DigestDue(ch.Schedule, ch.LastDigestAt, now)
	if !due {
		return false, at, nil
	}
	if from.Before(ch.CreatedAt) {
		from = ch.CreatedAt // as digestOf reads
	}
	if !from.Before(at) {
		return false, at, nil
	}
	_, total, err := s.store.DigestMatches(ctx, ch, from, at, 0)
	return err == nil && total == 0, at, err
}

// periodEnd ends a channel's open period at the clock's now, whatever its
// schedule, with the digest the sweep would write (ports.PeriodEnd): the
// channel leaves its digest, by its owner's change or switched off by
// failed sends.
func periodEnd(clock ports.Clock, site func() string) ports.PeriodEnd {
	return func(ch core.Webhook, read ports.DigestRead) (time.Time, *core.Delivery, error) {
		now := clock.Now()
		_, d, err := digestOf(ch, now, true, site, read)
		return now, d, err
	}
}

// digestOf reports whether ch's digest is due at now, or ends its period
// now whatever its schedule when force, and writes the period's digest
// of the matches read gives: nil when the period had none.
func digestOf(ch core.Webhook, now time.Time, force bool, site func() string, read ports.DigestRead) (bool, *core.Delivery, error) {
	due, from := core.DigestDue(ch.Schedule, ch.LastDigestAt, now)
	if !due {
		if !force {
			return false, nil, nil
		}
		// Not due yet: the open period began at the last digest.
		from = ch.LastDigestAt
	}
	if from.Before(ch.CreatedAt) {
		from = ch.CreatedAt // nothing before the channel was made
	}
	ms, total, err := read(from, now, core.ChannelDigestShown)
	if err != nil || total == 0 {
		return true, nil, err
	}
	dg := core.ChannelDigest{Frequency: ch.Schedule.Frequency, At: now, Total: total, MoreURL: dashboardLink(site)}
	for _, m := range ms {
		dg.Matches = append(dg.Matches, core.ChannelMatchOf(m))
	}
	body, err := core.RenderChannelDigest(ch.Kind, dg)
	if err != nil {
		return true, nil, err
	}
	return true, &core.Delivery{Event: core.EventDigest, Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, Payload: body}, nil
}

// dashboardLink is where a digest, or a channel's burst, sends the owner
// for the matches it counts but does not list: the dashboard under the
// site's address; empty when the address is not known.
func dashboardLink(site func() string) string {
	if s := strings.TrimSuffix(site(), "/"); s != "" {
		return s + "/app/"
	}
	return ""
}

// Run sweeps every interval until ctx ends.
func (s *ChannelDigests) Run(ctx context.Context, interval time.Duration) {
	every(ctx, interval, nil, func() {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "channel digest sweep failed", "err", err)
		} else if n > 0 {
			s.log.InfoContext(ctx, "channel digests queued", "digests", n)
		}
	})
}
