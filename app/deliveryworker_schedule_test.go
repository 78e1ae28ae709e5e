package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// tryLog is a receiver reached without the network, for a bubble: it
// answers each try with status and keeps when each came, per delivery.
type tryLog struct {
	status  int
	changed signal
	mu      sync.Mutex
	at      map[string][]time.Time
}

func (r *tryLog) Send(_ context.Context, m ports.WebhookMessage) ports.WebhookResult {
	r.mu.Lock()
	r.at[m.DeliveryID] = append(r.at[m.DeliveryID], time.Now())
	r.mu.Unlock()
	r.changed.notify()
	if r.status >= 200 && r.status <= 299 {
		return ports.WebhookResult{Status: r.status}
	}
	return ports.WebhookResult{Status: r.status, Error: fmt.Sprintf("http %d", r.status)}
}

func (r *tryLog) tries() map[string][]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]time.Time{}
	for id, ts := range r.at {
		out[id] = append([]time.Time(nil), ts...)
	}
	return out
}

// With the spec's schedule, a receiver that answers 500 gets the first
// try at once, then retries 1, 5 and 30 minutes after the try before
// (each plus at most 10 % jitter), 4 tries in all, and the delivery is
// failed; no fifth try follows however long the clock runs. In a bubble,
// so the minutes pass on its clock; the poll is an hour, so each retry
// is found by the worker's own wake-up at its time.
func TestWebhookSpecScheduleOnAMovedClock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	synctest.Test(t, func(t *testing.T) {
		rcv := &tryLog{status: http.StatusInternalServerError, changed: newSignal(), at: map[string][]time.Time{}}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, Poll: time.Hour}, rcv, nil)
		o := w.owner(t, "a@example.com")
		zero := 0
		wh, _, err := h.Create(context.Background(), o.ID, "http://127.0.0.1/hook", &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.score(t, o.ID, 1, 80)
		start := time.Now()
		h.start()
		h.waitLog(t, o.ID, wh.ID, 2*time.Hour, allFinal(1))
		<-time.After(3 * time.Hour) // on the bubble's clock: room for a fifth try that must not come
		all := rcv.tries()
		if len(all) != 1 {
			t.Fatalf("tries of %d deliveries, want 1", len(all))
		}
		for _, ts := range all {
			if len(ts) != 4 {
				t.Fatalf("%d tries, want 4", len(ts))
			}
			if first := ts[0].Sub(start); first > time.Second {
				t.Fatalf("first try %v after the score", first)
			}
			for i, want := range core.DefaultRetrySchedule {
				gap := ts[i+1].Sub(ts[i])
				if gap < want || gap > want+want/10+time.Second {
					t.Fatalf("try %d came %v after the one before, want %v plus at most 10%%", i+2, gap, want)
				}
			}
		}
		d := h.log(t, o.ID, wh.ID)[0]
		if d.Status != core.DeliveryFailed || d.Tries != 4 || d.ResponseStatus != 500 {
			t.Fatalf("log %+v", d)
		}
	})
}

// A delivered message between failures starts the count of failures in
// a row again: four failed, one delivered and four failed leave the
// webhook on; the fifth failure in a row switches it off with the reason.
func TestWebhookSuccessResetsFailureCount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		rcv := &tryLog{changed: newSignal(), at: map[string][]time.Time{}}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, Schedule: core.RetrySchedule{}, Poll: time.Hour}, rcv, nil)
		o := w.owner(t, "a@example.com")
		zero := 0
		wh, _, err := h.Create(ctx, o.ID, "http://127.0.0.1/hook", &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.start()
		sent := 0
		send := func(status, n int) core.Webhook {
			t.Helper()
			rcv.mu.Lock()
			rcv.status = status
			rcv.mu.Unlock()
			for range n {
				h.score(t, o.ID, 1, 80)
				h.Poke()
				sent++
				h.waitLog(t, o.ID, wh.ID, time.Minute, allFinal(sent))
			}
			got, _, err := h.store.Webhook(ctx, o.ID, wh.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := send(500, 4); !got.Active || got.ConsecutiveFailures != 4 {
			t.Fatalf("after 4 failures: %+v", got)
		}
		if got := send(204, 1); !got.Active || got.ConsecutiveFailures != 0 {
			t.Fatalf("after a delivered message: %+v", got)
		}
		if got := send(500, 4); !got.Active || got.ConsecutiveFailures != 4 {
			t.Fatalf("after 4 more failures: %+v", got)
		}
		got := send(500, 1)
		if got.Active || got.ConsecutiveFailures != 5 || got.DisabledReason != "switched off after 5 failed deliveries in a row; last error: http 500" {
			t.Fatalf("after the fifth failure in a row: %+v", got)
		}
	})
}
