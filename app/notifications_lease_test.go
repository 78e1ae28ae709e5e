package app

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// mailLog counts the emails each replica's mail server accepted, by
// address and subject; a replica's server takes its time a message.
type mailLog struct {
	mu   sync.Mutex
	seen map[string]int
}

type paced struct {
	log   *mailLog
	takes time.Duration
}

func (p paced) Send(_ context.Context, m ports.Mail) error {
	<-time.After(p.takes) // the server's answer time, on the bubble's clock
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	p.log.seen[m.To+" "+m.Subject]++
	return nil
}

// Two replicas send the owed notification emails, one through a mail
// server that takes most of its 30 seconds a message: each email still
// goes out once. The slow one must not send what its claim no longer
// covers, which the other may have claimed and sent meanwhile. In a
// bubble, where the store's clock is the bubble's too.
func TestNotificationEmailsSentOnceBesideASlowReplica(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble, as in TestSlowReceiverDoesNotDelayOthers
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		sent := &mailLog{seen: map[string]int{}}
		slow, quick := newNotes(w, paced{log: sent, takes: 29 * time.Second}), newNotes(w, paced{log: sent})
		const owed = 15
		for i := range owed {
			o := w.owner(t, fmt.Sprintf("n%d@example.com", i))
			hook := core.Webhook{ID: fmt.Sprint("wh_", i), OwnerID: o.ID, URL: fmt.Sprintf("https://hooks.example.com/%d", i), DisabledReason: "gone"}
			if err := slow.WebhookSwitchedOff(ctx, hook); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() { defer close(done); slow.SendEmails(ctx) }()
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case <-time.After(10 * time.Second): // the other replica's sweeps, on the bubble's clock
				if _, err := quick.SendEmails(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := quick.SendEmails(ctx); err != nil {
			t.Fatal(err)
		}
		sent.mu.Lock()
		defer sent.mu.Unlock()
		if len(sent.seen) != owed {
			t.Fatalf("%d of %d emails went out", len(sent.seen), owed)
		}
		for k, n := range sent.seen {
			if n > 1 {
				t.Errorf("%q went out %d times", k, n)
			}
		}
	})
}
