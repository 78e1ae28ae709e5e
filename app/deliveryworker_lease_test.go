package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/ports"
)

// slowOnce is receivers that each answer 204 after a delay above
// fastAnswer, counting the sends of every delivery id.
type slowOnce struct {
	delay   time.Duration
	changed signal
	mu      sync.Mutex
	sends   map[string]int
}

func (r *slowOnce) Send(_ context.Context, m ports.WebhookMessage) ports.WebhookResult {
	r.mu.Lock()
	r.sends[m.DeliveryID]++
	r.mu.Unlock()
	<-time.After(r.delay) // the receiver's answer time, on the bubble's clock
	r.changed.notify()
	return ports.WebhookResult{Status: http.StatusNoContent, Duration: r.delay}
}

func (r *slowOnce) counts() (ids, twice int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.sends {
		if n > 1 {
			twice++
		}
	}
	return len(r.sends), twice
}

// When the pool is the bound and many destinations have work, a webhook
// gets a share of it, and what the worker holds for it waits longer:
// each delivery is still sent once, never also by a later claim that
// found its lease run out while it was held. In a bubble, where the
// store's clock is the bubble's too.
func TestHeldDeliveriesSentOnceWhenThePoolIsShared(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble, as in TestSlowReceiverDoesNotDelayOthers
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rcv := &slowOnce{delay: 9 * time.Second, changed: newSignal(), sends: map[string]int{}}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, Workers: 2}, rcv, nil)
		hook := func(name string) string {
			o := w.owner(t, name+"@example.com")
			zero := 0
			if _, _, err := h.Create(ctx, o.ID, "http://127.0.0.1/"+name, &zero, nil); err != nil {
				t.Fatal(err)
			}
			return o.ID
		}
		const first, others, each = 32, 30, 2
		h.score(t, hook("a"), first, 80) // due first: the first claim holds them all
		for i := range others {
			h.score(t, hook(fmt.Sprint("o", i)), each, 80)
		}
		h.start()
		const all = first + others*each
		waitUntil(t, 3*time.Hour, rcv.changed, func() bool { ids, _ := rcv.counts(); return ids == all }, func() string {
			ids, _ := rcv.counts()
			return fmt.Sprintf("%d of %d deliveries sent", ids, all)
		})
		h.stop()
		if _, twice := rcv.counts(); twice > 0 {
			t.Fatalf("%d deliveries were sent twice: their lease ran out while the worker held them, and a claim took them again", twice)
		}
	})
}
