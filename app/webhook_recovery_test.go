package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// clockedHooks is newHooks with both services on clock: the worker
// decides by it which secrets sign each try, the subscription service
// when a rotation's overlap ends. cfg.Schedule nil is one try.
func clockedHooks(t *testing.T, w world, clock ports.Clock, schedule core.RetrySchedule) *hooks {
	t.Helper()
	sealer, err := core.NewSealer(testSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	if schedule == nil {
		schedule = core.RetrySchedule{}
	}
	store := gormstore.NewWebhookStore(w.db)
	sender := webhooksender.New(webhooksender.Config{Timeout: 2 * time.Second, AllowPrivate: true})
	h := &hooks{w: w, store: store, claims: &claimWatch{DeliveryQueue: store, idled: make(chan struct{}, 1), wrote: newSignal()}, sealer: sealer, stop: func() {}}
	h.worker = NewDeliveryWorker(DeliveryDeps{Queue: h.claims, Sender: sender, Sealer: sealer, Clock: clock, Log: quiet},
		DeliveryConfig{Schedule: schedule, Poll: 50 * time.Millisecond, Timeout: 2 * time.Second})
	h.Webhooks = NewWebhooks(WebhookDeps{Store: store, Sender: sender, Sealer: sealer, Clock: clock, Log: quiet, Wake: h.worker.Poke},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 3}, AllowPrivate: true})
	t.Cleanup(func() { h.stop() })
	return h
}

// recorder is a receiver that checks nothing: it keeps each message so
// that the test verifies it with whichever secret it means to, and
// answers 204.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	msgs []webhooktest.Message
	got  signal
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{got: newSignal()}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.msgs = append(r.msgs, webhooktest.Message{Event: req.Header.Get(core.HeaderEvent), DeliveryID: req.Header.Get(core.HeaderDelivery),
			Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		r.got.notify()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait returns the messages once there are n.
func (r *recorder) wait(t *testing.T, n int) []webhooktest.Message {
	t.Helper()
	var msgs []webhooktest.Message
	waitUntil(t, 5*time.Second, r.got, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		msgs = slices.Clone(r.msgs)
		return len(msgs) >= n
	}, func() string { return "fewer messages than expected arrived" })
	return msgs
}

// verifies reports whether the Standard Webhooks library, given secret
// as the create or rotate answer returned it, takes the message.
func verifies(t *testing.T, secret string, m webhooktest.Message) bool {
	t.Helper()
	lib, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the library refuses the secret %q: %v", secret[:10], err)
	}
	return lib.Verify(m.Body, m.Header) == nil
}

// A rotation answers a new secret once and keeps the old one signing
// for the overlap: a receiver verifying with the Standard Webhooks
// library and the OLD secret takes every message until the overlap ends,
// one with the NEW secret takes them from the rotation on, and after the
// overlap only the new one does. X-Service-Signature carries the new
// secret's one value throughout. The sweep then forgets the old secret;
// a rotation without overlap stops the old secret at once.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		clock := &handClock{now: time.Now()}
		h := clockedHooks(t, w, clock, nil)
		o, other := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
		rec := newRecorder(t)
		zero := 0
		wh, first, err := h.Create(ctx, o.ID, rec.srv.URL, &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.start()

		rotated, second, err := h.RotateSecret(ctx, o.ID, wh.ID, nil)
		if err != nil || second == first || !strings.HasPrefix(second, core.WebhookSecretPrefix) ||
			!rotated.PreviousSecretUntil.Equal(clock.Now().Add(core.DefaultSecretOverlap).Truncate(time.Microsecond)) {
			t.Fatalf("RotateSecret = %+v, %q, %v", rotated, second, err)
		}
		// Both stay sealed at rest.
		_, sealed, err := h.store.WebhookSecrets(ctx, o.ID, wh.ID)
		if err != nil || bytes.Contains(sealed.Current, []byte(second)) || bytes.Contains(sealed.Previous, []byte(first)) {
			t.Fatalf("a secret is stored in the clear: %v", err)
		}
		for secret, s := range map[string][]byte{second: sealed.Current, first: sealed.Previous} {
			if opened, err := h.sealer.Open(s, []byte(wh.ID)); err != nil || string(opened) != secret {
				t.Fatalf("a sealed secret opens to %q, %v", opened, err)
			}
		}

		// During the overlap: a match and a test ping, each verified by the
		// library with either secret; the spec's header is the new one's.
		h.score(t, o.ID, 1, 90)
		if _, err := h.Test(ctx, o.ID, wh.ID, nil); err != nil {
			t.Fatal(err)
		}
		msgs := rec.wait(t, 2)
		for _, m := range msgs {
			if !verifies(t, first, m) || !verifies(t, second, m) {
				t.Errorf("%s during the overlap: old secret %v, new secret %v; want both", m.Event, verifies(t, first, m), verifies(t, second, m))
			}
			if vals := strings.Fields(m.Header.Get(core.HeaderStandardSignature)); len(vals) != 2 {
				t.Errorf("%s during the overlap: webhook-signature %q", m.Event, vals)
			}
			if !specRecipe(second, m) || specRecipe(first, m) {
				t.Errorf("%s during the overlap: X-Service-Signature is not the new secret's alone", m.Event)
			}
		}

		// After the overlap: the new secret alone.
		clock.add(core.DefaultSecretOverlap)
		h.score(t, o.ID, 1, 90)
		if _, err := h.Test(ctx, o.ID, wh.ID, nil); err != nil {
			t.Fatal(err)
		}
		msgs = rec.wait(t, 4)
		for _, m := range msgs[2:] {
			if verifies(t, first, m) || !verifies(t, second, m) || !specRecipe(second, m) {
				t.Errorf("%s after the overlap: old secret %v, new secret %v; want the new one alone", m.Event, verifies(t, first, m), verifies(t, second, m))
			}
		}
		// The sweep forgets the old secret from the database.
		if err := h.worker.ForgetReplacedSecrets(ctx); err != nil {
			t.Fatal(err)
		}
		if got, sealed, err := h.store.WebhookSecrets(ctx, o.ID, wh.ID); err != nil || sealed.Previous != nil || !got.PreviousSecretUntil.IsZero() {
			t.Fatalf("after the sweep: %+v, previous %d bytes, %v", got, len(sealed.Previous), err)
		}

		// No overlap: the replaced secret stops at once.
		none := time.Duration(0)
		rotated, third, err := h.RotateSecret(ctx, o.ID, wh.ID, &none)
		if err != nil || !rotated.PreviousSecretUntil.IsZero() {
			t.Fatalf("RotateSecret without overlap = %+v, %v", rotated, err)
		}
		h.score(t, o.ID, 1, 90)
		msgs = rec.wait(t, 5)
		if m := msgs[4]; verifies(t, second, m) || !verifies(t, third, m) {
			t.Errorf("after a rotation without overlap: the replaced secret %v, the new one %v", verifies(t, second, m), verifies(t, third, m))
		}

		for name, overlap := range map[string]time.Duration{"8 days": 8 * 24 * time.Hour, "negative": -time.Second} {
			if _, _, err := h.RotateSecret(ctx, o.ID, wh.ID, &overlap); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("overlap %s: %v", name, err)
			}
		}
		if _, _, err := h.RotateSecret(ctx, other.ID, wh.ID, nil); !core.IsKind(err, core.KindNotFound) {
			t.Errorf("another owner's rotation: %v", err)
		}
		h.cfg.Limits = core.FreeLimits
		if _, _, err := h.RotateSecret(ctx, o.ID, wh.ID, nil); !core.IsKind(err, core.KindPlanLimit) {
			t.Errorf("a rotation on a plan without webhooks: %v", err)
		}
	})
}

// Failed deliveries of a range are replayed as new deliveries (new id,
// same event and match, trigger replay), sent by the worker like any
// other; the failed ones stay in the log; the same replay again queues
// nothing once they are delivered. A switched-off webhook refuses with
// a conflict; ranges are checked; other owners' webhooks are not found.
func TestWebhookReplay(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		h := clockedHooks(t, w, ports.SystemClock{}, nil) // one try a delivery
		o, other := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
		wh, rcv := h.webhook(t, o.ID, 0)
		rcv.SetStatus(http.StatusInternalServerError)
		h.start()
		from := time.Now().Add(-time.Second)
		ms := h.score(t, o.ID, 3, 90)
		failed := h.waitLog(t, o.ID, wh.ID, 5*time.Second, allFinal(3))
		for _, d := range failed {
			if d.Status != core.DeliveryFailed {
				t.Fatalf("before the replay: %+v", d)
			}
		}

		off := false
		if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Replay(ctx, o.ID, wh.ID, from, time.Time{}, nil); !core.IsKind(err, core.KindConflict) || !strings.Contains(core.Message(err), "switch it on first") {
			t.Fatalf("a replay of a switched-off webhook: %v", err)
		}
		on := true
		if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &on}); err != nil {
			t.Fatal(err)
		}

		rcv.SetStatus(http.StatusOK)
		res, err := h.Replay(ctx, o.ID, wh.ID, from, time.Time{}, nil) // to: now
		if err != nil || len(res.Queued) != 3 || res.More {
			t.Fatalf("Replay = %+v, %v; want 3 queued and no more", res, err)
		}
		msgs := rcv.WaitFor(6, 5*time.Second)[3:]
		sentMatches := map[string]string{} // delivery id: match id
		for _, m := range msgs {
			data, _ := m.JSON["data"].(map[string]any)
			sentMatches[m.DeliveryID], _ = data["id"].(string)
			if m.Event != core.EventMatchCreated || m.JSON["id"] != m.DeliveryID {
				t.Errorf("replayed message %+v", m.JSON)
			}
		}
		log := h.waitLog(t, o.ID, wh.ID, 5*time.Second, allFinal(6))
		for _, d := range res.Queued {
			if slices.ContainsFunc(failed, func(f core.Delivery) bool { return f.ID == d.ID }) {
				t.Fatalf("a replay kept the id of the failed delivery %s", d.ID)
			}
			i := slices.IndexFunc(log, func(l core.Delivery) bool { return l.ID == d.ID })
			if i < 0 || log[i].Trigger != core.TriggerReplay || log[i].Status != core.DeliveryDelivered || log[i].Event != core.EventMatchCreated ||
				sentMatches[d.ID] != d.MatchID || !slices.ContainsFunc(ms, func(m core.Match) bool { return m.ID == d.MatchID }) {
				t.Fatalf("replay %s in the log: %+v (sent for match %q)", d.ID, log, sentMatches[d.ID])
			}
		}
		for _, f := range failed {
			if !slices.ContainsFunc(log, func(l core.Delivery) bool { return l.ID == f.ID && l.Status == core.DeliveryFailed }) {
				t.Fatalf("the failed delivery %s left the log", f.ID)
			}
		}
		if res, err := h.Replay(ctx, o.ID, wh.ID, from, time.Time{}, nil); err != nil || len(res.Queued) != 0 || res.More {
			t.Fatalf("the same replay again = %+v, %v; want nothing", res, err)
		}

		for name, r := range map[string][2]time.Time{
			"no from":   {{}, time.Now()},
			"backwards": {time.Now(), time.Now().Add(-time.Hour)},
		} {
			if _, err := h.Replay(ctx, o.ID, wh.ID, r[0], r[1], nil); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("range %s: %v", name, err)
			}
		}
		if _, err := h.Replay(ctx, other.ID, wh.ID, from, time.Time{}, nil); !core.IsKind(err, core.KindNotFound) {
			t.Errorf("another owner's replay: %v", err)
		}
		h.cfg.Limits = core.FreeLimits
		if _, err := h.Replay(ctx, o.ID, wh.ID, from, time.Time{}, nil); !core.IsKind(err, core.KindPlanLimit) {
			t.Errorf("a replay on a plan without webhooks: %v", err)
		}
	})
}
