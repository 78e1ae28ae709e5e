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

// A channel on a digest that failed sends switch off (not its owner) ends
// its period there and then, as a switch-off by its owner does: the
// period's digest waits queued while the channel is off and goes out
// when it is switched on again, so what was scored since the last digest
// is not dropped by the new period the switch-on starts.
func TestChannelSwitchedOffByFailuresEndsItsPeriod(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		o := w.owner(t, "autooff@example.com")
		switched := make(chan core.Webhook, 1)
		// The system's clock for the service and the worker alike: the
		// worker ends the period on its own clock.
		c := newChansOn(t, w, func(_ context.Context, h core.Webhook) { switched <- h }, ports.SystemClock{})
		slack := c.add(t, o.ID, core.ChannelSlack, 50, "")
		// Five match messages queued at once, then the move to hourly: the
		// five fail together (Slack's documented 500 rollup_error) and
		// switch the channel off, five failures in a row.
		for i := range core.MaxConsecutiveFailures {
			p := hostile
			p.Title = fmt.Sprintf("at once %d", i)
			c.scorePost(t, o.ID, p, core.Score{Value: 80, Intent: core.IntentBuying, Reason: "r"})
		}
		hourly, on := "hourly", true
		if _, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &hourly}); err != nil {
			t.Fatal(err)
		}
		p := hostile
		p.Title = "scored in the hourly period"
		c.scorePost(t, o.ID, p, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})

		c.fake.answer(core.ChannelSlack, 500, "rollup_error")
		c.start()
		deadline := time.NewTimer(10 * time.Second)
		defer deadline.Stop()
		select {
		case h := <-switched:
			if h.ID != slack.ID || h.Active {
				t.Fatalf("switched off: %+v", h)
			}
		case <-deadline.C:
			t.Fatalf("the channel was not switched off within 10s: %d messages", len(c.fake.requests(core.ChannelSlack)))
		}
		c.settle(t)
		var digests []core.Delivery
		for _, d := range c.log(t, o.ID, slack.ID) {
			if d.Event == core.EventDigest {
				digests = append(digests, d)
			}
		}
		if len(digests) != 1 || digests[0].Status != core.DeliveryQueued || digests[0].Tries != 0 ||
			!strings.Contains(string(digests[0].Payload), "scored in the hourly period") || strings.Contains(string(digests[0].Payload), "at once") {
			t.Fatalf("digests after the switch-off: %+v; want the period's one, queued", digests)
		}
		got, err := c.Get(ctx, o.ID, slack.ID)
		if err != nil || got.Active || got.LastDigestAt.Before(slack.CreatedAt) {
			t.Fatalf("after the switch-off: %+v, %v", got, err)
		}

		c.fake.answer(core.ChannelSlack, 200, "ok")
		sent := len(c.fake.requests(core.ChannelSlack))
		c.start()
		if _, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Active: &on}); err != nil {
			t.Fatal(err)
		}
		c.fake.waitFor(t, sent+1, core.ChannelSlack)
		c.settle(t)
		after := c.fake.requests(core.ChannelSlack)[sent:]
		if len(after) != 1 || !strings.Contains(string(after[0].Body), "scored in the hourly period") {
			t.Fatalf("sent after the switch-on: %d messages, want the digest: %+v", len(after), after)
		}
	})
}

// periodHook is the channel store with hook run at the end of a period
// the owner's change brings about: after the period's matches are read,
// before the change is stored.
type periodHook struct {
	ports.ChannelStore
	hook func()
}

// AddDigest is where the end of the period stood apart from the change.
func (s *periodHook) AddDigest(ctx context.Context, ch core.Webhook, at time.Time, d *core.Delivery, keep int) (bool, error) {
	ok, err := s.ChannelStore.AddDigest(ctx, ch, at, d, keep)
	if ok {
		s.hook()
	}
	return ok, err
}

// UpdateChannelPeriod runs the hook inside the change's transaction, once
// the period's matches are read.
func (s *periodHook) UpdateChannelPeriod(ctx context.Context, ownerID, id string, change func(core.Webhook, []byte) (core.Webhook, []byte, error),
	end ports.PeriodEnd, keep int) (core.Webhook, error) {
	return s.ChannelStore.UpdateChannelPeriod(ctx, ownerID, id, change, func(ch core.Webhook, read ports.DigestRead) (time.Time, *core.Delivery, error) {
		at, d, err := end(ch, read)
		s.hook()
		return at, d, err
	}, keep)
}

// A match scored while the owner moves a channel from its digest to at
// once, in the instant after the period's matches are read, by scoring
// that reads the channel then, is in the period's digest or goes at once:
// never in neither.
func TestChannelLeavingItsDigestLosesNoMatchScoredMeanwhile(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		o := w.owner(t, "leaving@example.com")
		c := newChansOn(t, w, nil, ports.SystemClock{})
		slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
		p := hostile
		p.Title = "scored in the period"
		c.scorePost(t, o.ID, p, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
		ph, err := core.NewPhrase(o.ID, "meanwhile", "x", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.phrases.CreatePhrase(ctx, &ph, core.Limits{PhrasesPerPlatform: 100}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}

		// The scoring runs beside the change: a store that holds the change
		// back holds the scoring back too.
		scored := make(chan error, 1)
		store := &periodHook{ChannelStore: c.cstore}
		store.hook = func() {
			store.hook = func() {}
			go func() {
				p := hostile
				p.Title, p.ExternalID = "scored meanwhile", "meanwhile"
				res, err := w.matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: p, PhraseIDs: []string{ph.ID}}})
				if err == nil {
					_, err = w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: res.Matches[0],
						Score: core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"}}}, core.QueueMatchCreated)
				}
				scored <- err
			}()
		}
		ch := NewChannels(ChannelDeps{Webhooks: c.svc, Store: store, Digests: NewChannelDigests(ChannelDigestDeps{Store: store, Wake: c.Poke})})
		c.start()
		once := "at once"
		if _, err := ch.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &once}); err != nil {
			t.Fatal(err)
		}
		if err := <-scored; err != nil {
			t.Fatal(err)
		}
		c.Poke()
		waitUntil(t, 5*time.Second, c.fake.arrived, func() bool {
			for _, r := range c.fake.requests(core.ChannelSlack) {
				if strings.Contains(string(r.Body), "scored meanwhile") {
					return true
				}
			}
			return false
		}, func() string {
			var log []string
			for _, d := range c.log(t, o.ID, slack.ID) {
				log = append(log, d.Event+" "+string(d.Status))
			}
			return fmt.Sprintf("the match scored meanwhile never went out: log %v", log)
		})
		c.settle(t)
	})
}
