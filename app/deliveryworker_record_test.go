package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// failingRecord is a delivery queue whose first fails writes of attempts
// fail before anything is written, as a database that drops a connection
// or is busy for a moment does.
type failingRecord struct {
	ports.DeliveryQueue
	mu    sync.Mutex
	fails int
}

func (q *failingRecord) FinishAttempts(ctx context.Context, as []ports.Attempt, rules ports.AttemptRules) ([]ports.AttemptResult, error) {
	q.mu.Lock()
	fail := q.fails > 0
	q.fails--
	q.mu.Unlock()
	if fail {
		return nil, errors.New("connection reset by peer")
	}
	return q.DeliveryQueue.FinishAttempts(ctx, as, rules)
}

// A write of attempts that fails for a moment after the messages went
// out is made again while their leases hold: left to the leases, each
// delivery would be claimed and sent a second time once they ran out.
// In a bubble, where the store's clock is the bubble's too.
func TestFailedRecordIsNotSentTwice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rcv := &slowOnce{delay: 10 * time.Millisecond, changed: newSignal(), sends: map[string]int{}}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout}, rcv, nil)
		h.claims.DeliveryQueue = &failingRecord{DeliveryQueue: h.claims.DeliveryQueue, fails: 1}
		o := w.owner(t, "a@example.com")
		zero := 0
		wh, _, err := h.Create(ctx, o.ID, "http://127.0.0.1/a", &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.score(t, o.ID, 3, 80)
		h.start()
		// Three hours pass the lease of a claim many times over. The log
		// is final once each attempt is stored: at once by a write made
		// again, or, the failed write left to the leases, after a second
		// claim sent each again.
		h.waitLog(t, o.ID, wh.ID, 3*time.Hour, allFinal(3))
		h.stop()
		ids, twice := rcv.counts()
		if ids != 3 || twice > 0 {
			t.Fatalf("%d deliveries sent, %d of them twice; want 3, each once", ids, twice)
		}
		for _, d := range h.log(t, o.ID, wh.ID) {
			if d.Status != core.DeliveryDelivered || d.Tries != 1 {
				t.Fatalf("delivery %s: %s after %d tries, want delivered after 1", d.ID, d.Status, d.Tries)
			}
		}
	})
}
