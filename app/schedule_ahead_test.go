package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// An hourly channel whose last digest went out while the clock was a day
// ahead, the clock set back since: the first sweep after sends nothing
// and ends the period at the present, and the next digest goes out an
// hour later with what was scored since, not a day later. The matches
// are stamped by a replica whose clock was right all along.
func TestChannelDigestAfterTheClockWentBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "ahead@example.com")
	c := newChans(t, w, nil)
	c.start()
	start := c.clock.Now().Truncate(time.Minute)
	c.clock.now = start
	ch := c.add(t, o.ID, core.ChannelSlack, 0, "hourly")
	sweep := func(at time.Time, want int) {
		t.Helper()
		c.clock.now = at
		if n, err := c.digests.Sweep(ctx); err != nil || n != want {
			t.Fatalf("at %v: a sweep queued %d, %v; want %d", at, n, err, want)
		}
	}
	lastDigest := func() time.Time {
		t.Helper()
		got, _, err := c.hooks.store.Webhook(ctx, o.ID, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastDigestAt
	}

	c.scoreAt(t, o.ID, "scored before the digest", start.Add(5*time.Minute))
	sweep(start.Add(25*time.Hour), 1) // a day ahead: 10 minutes in
	c.fake.waitFor(t, 1, core.ChannelSlack)

	back := start.Add(20 * time.Minute)
	sweep(back, 0)
	if got := lastDigest(); !got.Equal(back) {
		t.Fatalf("after the clock went back, the period ends at %v, want the present %v", got, back)
	}
	c.scoreAt(t, o.ID, "scored after the clock went back", start.Add(30*time.Minute))
	sweep(back.Add(59*time.Minute), 0)
	sweep(back.Add(time.Hour), 1)
	c.fake.waitFor(t, 2, core.ChannelSlack)
	c.settle(t)
	got := c.fake.requests(core.ChannelSlack)
	if len(got) != 2 {
		t.Fatalf("%d messages, want the digest at the later time and the one an hour after the clock went back", len(got))
	}
	if text := string(got[1].Body); !strings.Contains(text, "scored after the clock went back") || strings.Contains(text, "scored before the digest") {
		t.Fatalf("the digest after the clock went back: %s", text)
	}
}

// An hourly owner whose last alert email was stamped a day ahead, the
// clock set back since: the next sweep mails what that email did not
// carry, at once rather than a day later, and the owner is hourly again
// from there.
func TestAlertHourlyAfterTheClockWentBack(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		start := time.Date(2026, 1, 10, 6, 0, 0, 0, time.UTC)
		clock := &handClock{now: start}
		box := &alertBox{}
		store := gormstore.NewAlertStore(w.db)
		alerts := alertService(w, store, box, clock)
		o := hourlyOwner(t, w, store, "ahead@example.com")
		ph := w.phrase(t, o.ID, "alerting", "golang")
		posts := 0
		scored := func() {
			t.Helper()
			posts++
			res, err := w.matches.SaveMatches(ctx, o.ID, core.Reddit, []ports.PostMatches{{Post: core.Post{ExternalID: fmt.Sprint("post-", posts),
				Text: "t", URL: fmt.Sprint("https://x.com/p/", posts)}, PhraseIDs: []string{ph.ID}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: res.Matches[0], Score: core.Score{Value: 90,
				Intent: core.IntentBuying, Reason: "cue"}}}, core.QueueMatchCreated); err != nil {
				t.Fatal(err)
			}
		}
		sweep := func(at time.Time, want int) {
			t.Helper()
			clock.now = at
			if _, err := alerts.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if got := box.take(o.Email); len(got) != want {
				t.Fatalf("at %v: %d emails, want %d", at, len(got), want)
			}
		}

		scored()
		sweep(start.Add(24*time.Hour), 1) // a day ahead
		scored()
		sweep(start.Add(10*time.Minute), 1) // set back: what the last did not carry
		scored()
		sweep(start.Add(69*time.Minute), 0)
		sweep(start.Add(70*time.Minute), 1)
	})
}
