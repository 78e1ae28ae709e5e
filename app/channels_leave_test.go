package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A channel moved from a digest to at once still sends what was scored
// in its open period: no digest will carry it, and no at-once delivery
// was queued for it.
func TestChannelDigestToAtOnceKeepsItsPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "tonce@example.com")
	c := newChans(t, w, nil)
	c.start()
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
	p := hostile
	p.Title = "post scored 90"
	c.scorePost(t, o.ID, p, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
	c.clock.add(30 * time.Minute)
	once := "at once"
	if _, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &once}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.clock.add(time.Hour)
		if _, err := c.digests.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.settle(t)
	for _, r := range c.fake.requests(core.ChannelSlack) {
		if strings.Contains(string(r.Body), "scored 90") {
			return
		}
	}
	t.Fatalf("the match scored in the hourly period before the move to at once never went out (%d messages): %s",
		len(c.fake.requests(core.ChannelSlack)), fmt.Sprint(c.log(t, o.ID, slack.ID)))
}

// A channel its owner switches off while on a digest ends its open
// period with the period's digest, which waits queued while the channel
// is off, as an at-once channel's messages do, and goes out, once, when
// it is switched on again; the period after the switch-on starts then.
func TestChannelDigestSwitchedOffKeepsItsPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "doff@example.com")
	c := newChans(t, w, nil)
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
	for _, v := range []int{70, 90} {
		p := hostile
		p.Title = fmt.Sprintf("post scored %d", v)
		c.scorePost(t, o.ID, p, core.Score{Value: v, Intent: core.IntentBuying, Reason: "r"})
	}
	c.clock.add(30 * time.Minute)
	off, on := false, true
	up, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Active: &off})
	if err != nil || up.Active || !up.LastDigestAt.Equal(c.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("switched off: %+v, %v; want the period ended now", up, err)
	}
	ds := c.log(t, o.ID, slack.ID)
	if len(ds) != 1 || ds[0].Event != core.EventDigest || ds[0].Status != core.DeliveryQueued ||
		!strings.Contains(string(ds[0].Payload), "scored 70") || !strings.Contains(string(ds[0].Payload), "scored 90") {
		t.Fatalf("log after the switch-off: %+v", ds)
	}

	// Off, the channel's digest waits: the worker claims nothing of it,
	// and sweeps do not read the channel.
	c.start()
	for range 2 {
		c.clock.add(time.Hour)
		if n, err := c.digests.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("a sweep while off queued %d, %v", n, err)
		}
	}
	c.settle(t)
	if n := len(c.fake.requests(core.ChannelSlack)); n != 0 {
		t.Fatalf("%d messages sent to a channel switched off", n)
	}
	if ds := c.log(t, o.ID, slack.ID); len(ds) != 1 || ds[0].Status != core.DeliveryQueued || ds[0].Tries != 0 {
		t.Fatalf("log while off: %+v", ds)
	}

	c.start()
	up, err = c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Active: &on})
	if err != nil || !up.Active || !up.LastDigestAt.Equal(c.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("switched on: %+v, %v; want a new period begun now", up, err)
	}
	c.fake.waitFor(t, 1, core.ChannelSlack)
	c.clock.add(time.Hour)
	if n, err := c.digests.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("the first period after the switch-on, without matches, queued %d, %v", n, err)
	}
	c.settle(t)
	got := c.fake.requests(core.ChannelSlack)
	if len(got) != 1 || !strings.Contains(string(got[0].Body), "scored 70") || !strings.Contains(string(got[0].Body), "scored 90") {
		t.Fatalf("sent after the switch-on: %d messages, want the one digest: %+v", len(got), got)
	}
	if ds := c.log(t, o.ID, slack.ID); len(ds) != 1 || ds[0].Status != core.DeliveryDelivered {
		t.Fatalf("log after the switch-on: %+v", ds)
	}
}

// A channel leaving its digest with no match in its open period queues
// nothing, though the period ends; a refused change ends nothing; and
// moved to at once, the channel then gets each match at once.
func TestChannelDigestLeftWithoutMatchesQueuesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "dnone@example.com")
	c := newChans(t, w, nil)
	c.start()
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "daily")
	p := hostile
	p.Title = "post scored 30"
	c.scorePost(t, o.ID, p, core.Score{Value: 30, Intent: core.IntentBuying, Reason: "r"}) // below the channel's score
	c.clock.add(30 * time.Minute)

	weekly := "weekly"
	if _, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &weekly}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("a weekly channel: %v", err)
	}
	if got, err := c.Get(ctx, o.ID, slack.ID); err != nil || !got.LastDigestAt.Equal(slack.LastDigestAt) {
		t.Fatalf("a refused change moved the period: %+v, %v", got, err)
	}

	once := "at once"
	up, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &once})
	if err != nil || up.Schedule.Digest() || !up.LastDigestAt.Equal(c.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("moved to at once: %+v, %v; want the period ended now", up, err)
	}
	if ds := c.log(t, o.ID, slack.ID); len(ds) != 0 {
		t.Fatalf("an empty period queued %+v", ds)
	}
	p.Title = "post scored 80"
	m := c.scorePost(t, o.ID, p, core.Score{Value: 80, Intent: core.IntentBuying, Reason: "r"})
	c.fake.waitFor(t, 1, core.ChannelSlack)
	c.clock.add(25 * time.Hour)
	if n, err := c.digests.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("a sweep after the move queued %d, %v", n, err)
	}
	c.settle(t)
	ds := c.log(t, o.ID, slack.ID)
	if len(ds) != 1 || ds[0].MatchID != m.ID || ds[0].Event == core.EventDigest || len(c.fake.requests(core.ChannelSlack)) != 1 {
		t.Fatalf("after the move: log %+v, %d messages; want the match at 80 at once", ds, len(c.fake.requests(core.ChannelSlack)))
	}
}

// A change that takes a channel off its digest and also gives a
// destination that is refused changes nothing: the open period is not
// ended early and no digest is queued for it.
func TestChannelLeavingWithARefusedDestinationChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "refused@example.com")
	c := newChans(t, w, nil)
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
	p := hostile
	p.Title = "post scored 90"
	c.scorePost(t, o.ID, p, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
	c.clock.add(30 * time.Minute)
	once, bad := "at once", "http://127.0.0.1/not-slack"
	if _, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &once, URL: &bad}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("a change with a refused destination: %v, want invalid", err)
	}
	if ds := c.log(t, o.ID, slack.ID); len(ds) != 0 {
		t.Fatalf("the refused change queued %+v", ds)
	}
	got, err := c.Get(ctx, o.ID, slack.ID)
	if err != nil || got.Schedule.Frequency != core.AlertHourly || !got.LastDigestAt.Equal(slack.LastDigestAt) {
		t.Fatalf("after the refused change: %+v, %v; want hourly, its period as it was", got, err)
	}
}
