package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// hooks is a subscription service over a world's database, with a
// delivery worker the test starts and stops.
type hooks struct {
	*Webhooks
	worker *DeliveryWorker
	w      world
	store  ports.WebhookStore
	claims *claimWatch
	sealer *core.Sealer
	stop   func()
}

// claimWatch is the worker's queue, noting each claim that found nothing
// due with no webhook left out, and each write of the worker.
type claimWatch struct {
	ports.DeliveryQueue
	mu      sync.Mutex
	started int           // claims begun
	idle    int           // the latest begun of those that found nothing
	idled   chan struct{} // a send after each such claim; never blocks
	wrote   signal        // after each write of the worker's, the log may have changed
}

func (s *claimWatch) FinishAttempts(ctx context.Context, a []ports.Attempt, rules ports.AttemptRules) ([]ports.AttemptResult, error) {
	defer s.wrote.notify()
	return s.DeliveryQueue.FinishAttempts(ctx, a, rules)
}

func (s *claimWatch) ReleaseDeliveries(ctx context.Context, due []ports.DueDelivery) error {
	defer s.wrote.notify()
	return s.DeliveryQueue.ReleaseDeliveries(ctx, due)
}

func (s *claimWatch) DropDelivery(ctx context.Context, due ports.DueDelivery) error {
	defer s.wrote.notify()
	return s.DeliveryQueue.DropDelivery(ctx, due)
}

func (s *claimWatch) ClaimDeliveries(ctx context.Context, c ports.DeliveryClaim) ([]ports.DueDelivery, error) {
	s.mu.Lock()
	s.started++
	n := s.started
	s.mu.Unlock()
	due, err := s.DeliveryQueue.ClaimDeliveries(ctx, c)
	if err == nil && len(due) == 0 && len(c.Skip) == 0 {
		s.mu.Lock()
		s.idle = max(s.idle, n)
		s.mu.Unlock()
		select {
		case s.idled <- struct{}{}:
		default:
		}
	}
	return due, err
}

// settle waits until a claim begun after the call finds nothing due, then
// stops the worker, which returns once every send under way is answered
// and recorded. Whatever was due by the call has been sent then: a test
// that expects nothing more counts what arrived. start runs the worker
// again.
func (h *hooks) settle(t *testing.T) {
	t.Helper()
	h.claims.mu.Lock()
	mark := h.claims.started
	h.claims.mu.Unlock()
	h.Poke()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		h.claims.mu.Lock()
		idle := h.claims.idle
		h.claims.mu.Unlock()
		if idle > mark {
			break
		}
		select {
		case <-h.claims.idled:
		case <-deadline.C:
			t.Fatal("no claim found the queue empty within 5s")
		}
	}
	h.stop()
}

const testSecretKey = "a test secret key of at least 32 characters"

// newHooks makes the services with room for 3 webhooks an owner and the
// relaxed address rules; a test changes h.cfg for others.
func newHooks(t *testing.T, w world, cfg DeliveryConfig) *hooks {
	t.Helper()
	return newHooksVia(t, w, cfg, nil, nil)
}

// newHooksWith is newHooks with switchedOff told of each switch-off the
// worker stores (DeliveryDeps.SwitchedOff).
func newHooksWith(t *testing.T, w world, cfg DeliveryConfig, switchedOff func(context.Context, core.Webhook)) *hooks {
	t.Helper()
	return newHooksVia(t, w, cfg, nil, switchedOff)
}

// newHooksVia is newHooksWith sending through sender; nil is the HTTP
// sender.
func newHooksVia(t *testing.T, w world, cfg DeliveryConfig, sender ports.WebhookSender, switchedOff func(context.Context, core.Webhook)) *hooks {
	t.Helper()
	sealer, err := core.NewSealer(testSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Poll == 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	store := gormstore.NewWebhookStore(w.db)
	if sender == nil {
		sender = webhooksender.New(webhooksender.Config{Timeout: cfg.Timeout, AllowPrivate: true})
	}
	h := &hooks{w: w, store: store, claims: &claimWatch{DeliveryQueue: store, idled: make(chan struct{}, 1), wrote: newSignal()}, sealer: sealer, stop: func() {}}
	h.worker = NewDeliveryWorker(DeliveryDeps{
		Queue: h.claims, Sender: sender, Sealer: sealer, Log: quiet, SwitchedOff: switchedOff,
	}, cfg)
	h.Webhooks = NewWebhooks(WebhookDeps{Store: store, Sender: sender, Sealer: sealer, Log: quiet, Wake: h.worker.Poke, Off: h.worker.Off},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 3}, AllowPrivate: true})
	t.Cleanup(func() { h.stop() })
	return h
}

// ownerHooks is newHooks over a world of its own with one owner,
// a@example.com.
func ownerHooks(t *testing.T, cfg DeliveryConfig) (*hooks, core.Owner) {
	t.Helper()
	w := newWorld(t)
	return newHooks(t, w, cfg), w.owner(t, "a@example.com")
}

// start runs the worker until stop or the end of the test.
func (h *hooks) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.worker.Run(ctx) }()
	h.stop = func() { cancel(); <-done }
}

// Poke wakes the worker, as a stored score does.
func (h *hooks) Poke() { h.worker.Poke() }

// webhook creates a webhook of the owner with a receiver behind it.
func (h *hooks) webhook(t *testing.T, ownerID string, minScore int) (core.Webhook, *webhooktest.Receiver) {
	t.Helper()
	r := webhooktest.NewRelay(t)
	w, secret, err := h.Create(context.Background(), ownerID, r.URL(), &minScore, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv := webhooktest.NewReceiver(t, secret)
	r.Connect(rcv)
	return w, rcv
}

// score saves n matches of the owner on x and scores each at value,
// poking the worker as the scoring service does.
func (h *hooks) score(t *testing.T, ownerID string, n, value int) []core.Match {
	t.Helper()
	ctx := context.Background()
	p, err := core.NewPhrase(ownerID, "hook "+randomHexT(t), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 100}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var batch []ports.PostMatches
	for i := 0; i < n; i++ {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: randomHexT(t), Author: "ada", Title: "wanted",
			Text: "who sells one", URL: fmt.Sprintf("https://x.com/ada/%d", i)}, PhraseIDs: []string{p.ID}})
	}
	res, err := h.w.matches.SaveMatches(ctx, ownerID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]core.Match, len(res.Matches))
	for i, m := range res.Matches {
		got, err := h.w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: core.Score{Value: value, Intent: core.IntentBuying, Reason: "asks where to buy"}}}, core.QueueMatchCreated)
		if err != nil || len(got) != 1 {
			t.Fatalf("SetScores: %+v, %v", got, err)
		}
		out[i] = got[0]
		h.Poke()
	}
	return out
}

func randomHexT(t testing.TB) string {
	return strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
}

func (h *hooks) log(t *testing.T, ownerID, webhookID string) []core.Delivery {
	t.Helper()
	ds, err := h.Deliveries(context.Background(), ownerID, webhookID)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// waitLog waits until the webhook's log satisfies ok, looking again
// after each write of h's worker: a log that other writers change is
// read once they are done.
func (h *hooks) waitLog(t *testing.T, ownerID, webhookID string, within time.Duration, ok func([]core.Delivery) bool) []core.Delivery {
	t.Helper()
	var ds []core.Delivery
	waitUntil(t, within, h.claims.wrote, func() bool { ds = h.log(t, ownerID, webhookID); return ok(ds) },
		func() string { return fmt.Sprintf("delivery log %+v", ds) })
	return ds
}

func allFinal(n int) func([]core.Delivery) bool {
	return func(ds []core.Delivery) bool {
		if len(ds) < n {
			return false
		}
		for _, d := range ds {
			if !d.Status.Final() {
				return false
			}
		}
		return true
	}
}

func TestWebhookRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o, other := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")

	free := newHooks(t, w, DeliveryConfig{})
	free.cfg.Limits = core.FreeLimits // newHooks gives room by default
	min := 50
	for name, err := range map[string]error{
		"create": func() error { _, _, err := free.Create(ctx, o.ID, "https://hooks.example.com", nil, nil); return err }(),
		"list":   func() error { _, err := free.List(ctx, o.ID); return err }(),
		"update": func() error { _, err := free.Update(ctx, o.ID, "x", ports.WebhookChange{MinScore: &min}); return err }(),
		"delete": free.Delete(ctx, o.ID, "x"),
		"test":   func() error { _, err := free.Test(ctx, o.ID, "x", nil); return err }(),
		"log":    func() error { _, err := free.Deliveries(ctx, o.ID, "x"); return err }(),
		"retry":  func() error { _, err := free.Retry(ctx, o.ID, "x", "y", nil); return err }(),
	} {
		if !core.IsKind(err, core.KindPlanLimit) {
			t.Errorf("%s on a plan without webhooks: %v", name, err)
		}
	}

	h := newHooks(t, w, DeliveryConfig{})
	h.cfg.Limits = core.Limits{WebhooksPerPerson: 2}
	h.cfg.AllowPrivate = false // the production address rules
	for raw, msg := range map[string]string{
		"http://hooks.example.com": "url must use https",
		"https://127.0.0.1/hook":   "not an IP address",
		"https://localhost/hook":   "localhost is not allowed",
		"https://box.internal/":    ".internal is not allowed",
		"":                         "url is required",
	} {
		_, _, err := h.Create(ctx, o.ID, raw, nil, nil)
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), msg) {
			t.Errorf("Create(%q) = %v, want a message with %q", raw, err, msg)
		}
	}
	for _, c := range []struct {
		min       int
		platforms []string
		msg       string
	}{{101, nil, "min_score"}, {-1, nil, "min_score"}, {70, []string{}, "platforms"}, {70, []string{"x", "myspace"}, "platforms"}} {
		_, _, err := h.Create(ctx, o.ID, "https://hooks.example.com/p", &c.min, c.platforms)
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), c.msg) {
			t.Errorf("Create(min %d, %v) = %v", c.min, c.platforms, err)
		}
	}

	wh, secret, err := h.Create(ctx, o.ID, "  https://Hooks.Example.com:443/in#frag ", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wh.URL != "https://hooks.example.com/in" || wh.MinScore != 70 || len(wh.Platforms) != 3 || !wh.Active || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("created %+v with secret %q", wh, secret)
	}
	_, sealed, err := h.store.Webhook(ctx, o.ID, wh.ID)
	if err != nil || bytes.Contains(sealed, []byte(secret)) {
		t.Fatalf("the secret is stored in the clear: %v", err)
	}
	if opened, err := h.sealer.Open(sealed, []byte(wh.ID)); err != nil || string(opened) != secret {
		t.Fatalf("the sealed secret opens to %q, %v", opened, err)
	}
	if _, _, err := h.Create(ctx, o.ID, "https://hooks.example.com/in", nil, nil); !core.IsKind(err, core.KindConflict) {
		t.Fatalf("the same url twice: %v", err)
	}
	zero := 0
	fb, _, err := h.Create(ctx, o.ID, "https://hooks.example.com/fb", &zero, []string{"facebook", "x", "facebook"})
	if err != nil || fb.MinScore != 0 || fmt.Sprint(fb.Platforms) != "[x facebook]" {
		t.Fatalf("create with filters: %+v, %v", fb, err)
	}
	if _, _, err := h.Create(ctx, o.ID, "https://hooks.example.com/third", nil, nil); !core.IsKind(err, core.KindPlanLimit) {
		t.Fatalf("a third webhook under a limit of 2: %v", err)
	}
	if list, err := h.List(ctx, o.ID); err != nil || len(list) != 2 || list[0].ID != wh.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if list, _ := h.List(ctx, other.ID); len(list) != 0 {
		t.Fatalf("another owner lists %+v", list)
	}

	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("an empty change: %v", err)
	}
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Platforms: []string{}}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("an empty platform list: %v", err)
	}
	off := false
	got, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off, MinScore: &min, Platforms: []string{"reddit"}})
	if err != nil || got.Active || got.MinScore != 50 || fmt.Sprint(got.Platforms) != "[reddit]" || got.URL != wh.URL {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	for name, err := range map[string]error{
		"update": func() error { _, err := h.Update(ctx, other.ID, wh.ID, ports.WebhookChange{Active: &off}); return err }(),
		"delete": h.Delete(ctx, other.ID, wh.ID),
		"test":   func() error { _, err := h.Test(ctx, other.ID, wh.ID, nil); return err }(),
		"log":    func() error { _, err := h.Deliveries(ctx, other.ID, wh.ID); return err }(),
		"retry":  func() error { _, err := h.Retry(ctx, other.ID, wh.ID, "y", nil); return err }(),
	} {
		if !core.IsKind(err, core.KindNotFound) {
			t.Errorf("%s of another owner's webhook: %v", name, err)
		}
	}
	if err := h.Delete(ctx, o.ID, wh.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Create(ctx, o.ID, "https://hooks.example.com/third", nil, nil); err != nil {
		t.Fatalf("create after a delete freed the limit: %v", err)
	}
}

// A manual retry sends the same message again with trigger manual.
func TestWebhookManualRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, o := ownerHooks(t, DeliveryConfig{})
	h.start()
	wh, rcv := h.webhook(t, o.ID, 0)
	h.score(t, o.ID, 1, 80)
	first := rcv.WaitFor(1, 2*time.Second)[0]
	h.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(1))

	d, err := h.Retry(ctx, o.ID, wh.ID, first.DeliveryID, nil)
	if err != nil || d.Status != core.DeliveryQueued || d.Trigger != core.TriggerManual || d.Tries != 0 {
		t.Fatalf("Retry = %+v, %v", d, err)
	}
	second := rcv.WaitFor(2, 2*time.Second)[1]
	if second.DeliveryID != first.DeliveryID || !bytes.Equal(second.Body, first.Body) {
		t.Fatalf("retried message %s %s, first %s", second.DeliveryID, second.Body, first.DeliveryID)
	}
	ds := h.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(1))
	if ds[0].Status != core.DeliveryDelivered || ds[0].Trigger != core.TriggerManual || ds[0].Tries != 1 {
		t.Fatalf("after the retry: %+v", ds[0])
	}
	if _, err := h.Test(ctx, o.ID, wh.ID, nil); err != nil {
		t.Fatal(err)
	}
	ping := h.log(t, o.ID, wh.ID)[0]
	if _, err := h.Retry(ctx, o.ID, wh.ID, ping.ID, nil); !core.IsKind(err, core.KindInvalidRequest) {
		t.Fatalf("retry of a ping: %v", err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, "no-such-delivery", nil); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("retry of an unknown delivery: %v", err)
	}
	h.stop() // so the next one stays queued
	if _, err := h.Retry(ctx, o.ID, wh.ID, first.DeliveryID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, first.DeliveryID, nil); !core.IsKind(err, core.KindConflict) {
		t.Fatalf("retry of a queued delivery: %v", err)
	}
	off := false
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, ping.ID, nil); !core.IsKind(err, core.KindConflict) {
		t.Fatalf("retry on a switched-off webhook: %v", err)
	}
}

// A test ping goes out signed at once, without the worker, and is logged;
// switching a webhook on and a manual retry wake the worker.
func TestWebhookPingAndWake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, o := ownerHooks(t, DeliveryConfig{})
	woken := 0
	h.deps.Wake = func() { woken++ }
	wh, rcv := h.webhook(t, o.ID, 0)
	res, err := h.Test(ctx, o.ID, wh.ID, nil)
	if err != nil || !res.Delivered() {
		t.Fatalf("Test = %+v, %v", res, err)
	}
	msg := rcv.WaitFor(1, time.Second)[0] // the receiver checked the signature
	var body struct {
		ID, Type string
		Data     struct{ WebhookID, Message string }
	}
	if err := json.Unmarshal(msg.Body, &body); err != nil || body.ID != msg.DeliveryID || body.Type != core.EventPing ||
		msg.Event != core.EventPing || body.Data.WebhookID != wh.ID || body.Data.Message != pingMessage {
		t.Fatalf("ping %s %s: %v", msg.Event, msg.Body, err)
	}
	ds := h.log(t, o.ID, wh.ID)
	if len(ds) != 1 || ds[0].ID != msg.DeliveryID || ds[0].Trigger != core.TriggerPing || ds[0].Status != core.DeliveryDelivered ||
		!bytes.Equal(ds[0].Payload, msg.Body) {
		t.Fatalf("log after a ping: %+v", ds)
	}
	if woken != 0 {
		t.Fatalf("a ping woke the worker %d times", woken)
	}
	on, off := true, false
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off}); err != nil || woken != 0 {
		t.Fatalf("switching off: %v, woke %d times", err, woken)
	}
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &on}); err != nil || woken != 1 {
		t.Fatalf("switching on: %v, woke %d times", err, woken)
	}
	h.score(t, o.ID, 1, 80) // queued, with no worker running
	queued := h.log(t, o.ID, wh.ID)[0]
	if _, err := h.store.UpdateDelivery(ctx, o.ID, wh.ID, queued.ID, func(d core.Delivery) (core.Delivery, error) {
		d.Status, d.Tries = core.DeliveryFailed, 4
		return d, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, queued.ID, nil); err != nil || woken != 2 {
		t.Fatalf("a manual retry: %v, woke %d times", err, woken)
	}
}
