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
		_, ok, err := s.channel(ctx, ch, now, false)
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

// channel ends ch's digest period if it is due, or now whatever its
// schedule when force (the channel leaves its digest: Channels.Update),
// queuing the period's digest when it had matches. ended reports whether
// this call ended the period; false with no error means the store
// refused: another replica ended it first, or the channel is no longer
// active and on a digest. queued reports whether a digest was queued.
func (s *ChannelDigests) channel(ctx context.Context, ch core.Webhook, now time.Time, force bool) (ended, queued bool, err error) {
	due, from := core.DigestDue(ch.Schedule, ch.LastDigestAt, now)
	if !due {
		if !force {
			return false, false, nil
		}
		// Not due yet: the open period began at the last digest.
		from = ch.LastDigestAt
	}
	if from.Before(ch.CreatedAt) {
		from = ch.CreatedAt // nothing before the channel was made
	}
	ms, total, err := s.store.DigestMatches(ctx, ch, from, now, core.ChannelDigestShown)
	if err != nil {
		return false, false, err
	}
	var d *core.Delivery
	if total > 0 {
		dg := core.ChannelDigest{Frequency: ch.Schedule.Frequency, At: now, Total: total, MoreURL: dashboardLink(s.site)}
		for _, m := range ms {
			dg.Matches = append(dg.Matches, core.ChannelMatchOf(m))
		}
		body, err := core.RenderChannelDigest(ch.Kind, dg)
		if err != nil {
			return false, false, err
		}
		d = &core.Delivery{Event: core.EventDigest, Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, Payload: body}
	}
	ok, err := s.store.AddDigest(ctx, ch, now, d, core.DeliveryLogSize)
	return ok, ok && d != nil, err
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
