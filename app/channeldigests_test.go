package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A daily channel whose hour no sweep reached (the service was down) and
// whose period had no match by then sends nothing when the service is
// back: a match scored after the hour waits for the next day's hour, as
// it does when a sweep finds the hour empty, rather than going out at an
// hour the owner did not pick. A digest the hour missed, of matches
// scored before it, still goes out at the first sweep after.
func TestChannelDailyDigestKeepsItsHourAfterAMissedQuietOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "quiet@example.com")
	c := newChans(t, w, nil)
	c.start()
	hour := c.clock.Now().Truncate(time.Hour).Add(time.Hour) // the next hour, in UTC
	in := c.fake.newTarget(core.ChannelSlack)
	zero := 0
	in.MinScore, in.Frequency, in.Hour = &zero, "daily", hour.Hour()
	ch, err := c.Create(ctx, o.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(at time.Time, want int) {
		t.Helper()
		c.clock.now = at
		if n, err := c.digests.Sweep(ctx); err != nil || n != want {
			t.Fatalf("at the hour %+v: a sweep queued %d, %v; want %d", at.Sub(hour), n, err, want)
		}
	}

	// No sweep within the hour, which had nothing; a match after it.
	c.scoreAt(t, o.ID, "scored after the hour", hour.Add(90*time.Minute))
	sweep(hour.Add(2*time.Hour), 0)
	if got, _, _ := c.hooks.store.Webhook(ctx, o.ID, ch.ID); !got.LastDigestAt.Equal(hour) {
		t.Fatalf("the quiet period ended at %v, want at the hour %v", got.LastDigestAt, hour)
	}
	sweep(hour.Add(23*time.Hour), 0)
	sweep(hour.Add(24*time.Hour+time.Minute), 1)
	c.fake.waitFor(t, 1, core.ChannelSlack)
	if text := string(c.fake.requests(core.ChannelSlack)[0].Body); !strings.Contains(text, "scored after the hour") {
		t.Fatalf("the digest: %s", text)
	}

	// The next day's hour missed too, with a match scored before it.
	c.scoreAt(t, o.ID, "scored before the missed hour", hour.Add(30*time.Hour))
	sweep(hour.Add(51*time.Hour), 1)
	c.fake.waitFor(t, 2, core.ChannelSlack)
	if text := string(c.fake.requests(core.ChannelSlack)[1].Body); !strings.Contains(text, "scored before the missed hour") {
		t.Fatalf("the missed digest: %s", text)
	}
}

// scoreAt scores hostile, titled title, as a match of the owner scored at
// at: the store stamps a match with the system's clock, and the digests
// read the test's.
func (c *chans) scoreAt(t *testing.T, ownerID, title string, at time.Time) {
	t.Helper()
	p := hostile
	p.Title = title
	m := c.scorePost(t, ownerID, p, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
	if _, err := c.hooks.w.db.SQL().Exec("UPDATE matches SET scored_at = ? WHERE id = ?", at.UnixMicro(), m.ID); err != nil {
		t.Fatal(err)
	}
}
