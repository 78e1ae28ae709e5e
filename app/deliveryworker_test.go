package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// A scored match reaches the receiver signed, with the record GET
// /matches/{id} shows; the log says delivered after one try.
func TestWebhookDelivers(t *testing.T) {
	t.Parallel()
	h, o := ownerHooks(t, DeliveryConfig{})
	h.start()
	wh, rcv := h.webhook(t, o.ID, 70)
	low := h.score(t, o.ID, 1, 40)[0]
	m := h.score(t, o.ID, 1, 90)[0]
	msg := rcv.WaitFor(1, 2*time.Second)[0]
	want, _ := json.Marshal(record.NewMatch(m))
	var got struct {
		ID, Type, CreatedAt string
		Data                json.RawMessage
	}
	if err := json.Unmarshal(msg.Body, &got); err != nil {
		t.Fatal(err)
	}
	if msg.Event != core.EventMatchCreated || got.Type != core.EventMatchCreated || got.ID != msg.DeliveryID || !jsonEqual(got.Data, want) {
		t.Fatalf("message %s %s: %s\nwant data %s", msg.Event, msg.DeliveryID, msg.Body, want)
	}
	if _, err := time.Parse(time.RFC3339, got.CreatedAt); err != nil {
		t.Fatalf("createdAt %q: %v", got.CreatedAt, err)
	}
	ds := h.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(1))
	d := ds[0]
	if len(ds) != 1 || d.ID != msg.DeliveryID || d.Status != core.DeliveryDelivered || d.Tries != 1 || d.ResponseStatus != 200 ||
		d.Error != "" || d.Trigger != core.TriggerScheduled || !bytes.Equal(d.Payload, msg.Body) {
		t.Fatalf("log %+v", ds)
	}
	h.settle(t)
	if n := len(rcv.Messages()); n != 1 || len(h.log(t, o.ID, wh.ID)) != 1 {
		t.Fatalf("%d messages; the match scored %d (below 70) must not be sent", n, low.Score.Value)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// A receiver answering 500 gets every try of the schedule, each with the
// same delivery id and body, then the delivery is failed.
func TestWebhookRetriesThenFails(t *testing.T) {
	t.Parallel()
	h, o := ownerHooks(t, DeliveryConfig{Schedule: core.RetrySchedule{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}})
	h.start()
	wh, rcv := h.webhook(t, o.ID, 0)
	rcv.SetStatus(500)
	h.score(t, o.ID, 1, 80)
	msgs := rcv.WaitFor(4, 3*time.Second)
	ds := h.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(1))
	for _, m := range msgs {
		if m.DeliveryID != msgs[0].DeliveryID || !bytes.Equal(m.Body, msgs[0].Body) {
			t.Fatalf("tries differ: %s %s", m.DeliveryID, m.Body)
		}
	}
	for i := 1; i < len(msgs); i++ {
		if gap := msgs[i].ReceivedAt.Sub(msgs[i-1].ReceivedAt); gap < 20*time.Millisecond {
			t.Fatalf("try %d came %v after the one before; the schedule waits 20ms", i+1, gap)
		}
	}
	d := ds[0]
	if d.Status != core.DeliveryFailed || d.Tries != 4 || d.ResponseStatus != 500 || d.Error != "http 500" || !d.NextAttemptAt.IsZero() {
		t.Fatalf("after 4 tries: %+v", d)
	}
	h.settle(t)
	if n := len(rcv.Messages()); n != 4 {
		t.Fatalf("%d tries, want 4", n)
	}
}

// Five failed deliveries in a row switch the webhook off; a failed ping
// does not count; PATCH active:true starts it afresh.
func TestWebhookSwitchesOffAfterFiveFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, o := ownerHooks(t, DeliveryConfig{Schedule: core.RetrySchedule{}}) // one try each
	h.start()
	wh, rcv := h.webhook(t, o.ID, 0)
	rcv.SetStatus(503)

	h.score(t, o.ID, 4, 80)
	h.waitLog(t, o.ID, wh.ID, 3*time.Second, allFinal(4))
	for i := 0; i < 3; i++ {
		res, err := h.Test(ctx, o.ID, wh.ID, nil)
		if err != nil || res.Delivered() || res.Status != 503 || res.Error != "http 503" {
			t.Fatalf("ping = %+v, %v", res, err)
		}
	}
	got, _, _ := h.store.Webhook(ctx, o.ID, wh.ID)
	if !got.Active || got.ConsecutiveFailures != 4 {
		t.Fatalf("after 4 failed deliveries and 3 failed pings: %+v", got)
	}
	pings := 0
	for _, d := range h.log(t, o.ID, wh.ID) {
		if d.Trigger == core.TriggerPing {
			pings++
			if d.Event != core.EventPing || d.Status != core.DeliveryFailed || d.Tries != 1 || d.ResponseStatus != 503 {
				t.Fatalf("ping in the log: %+v", d)
			}
		}
	}
	if pings != 3 {
		t.Fatalf("%d pings in the log, want 3", pings)
	}

	h.score(t, o.ID, 1, 80)
	h.waitLog(t, o.ID, wh.ID, 3*time.Second, allFinal(8))
	got, _, _ = h.store.Webhook(ctx, o.ID, wh.ID)
	if got.Active || got.ConsecutiveFailures != 5 || !strings.Contains(got.DisabledReason, "5 failed deliveries") || !strings.Contains(got.DisabledReason, "http 503") {
		t.Fatalf("after the fifth failed delivery: %+v", got)
	}
	// Switched off: new matches queue nothing for it.
	before := len(rcv.Messages())
	h.score(t, o.ID, 2, 80)
	h.settle(t)
	if n := len(rcv.Messages()); n != before || len(h.log(t, o.ID, wh.ID)) != 8 {
		t.Fatalf("a switched-off webhook got %d more messages", n-before)
	}
	// A ping still works on it, so the owner can check the receiver.
	rcv.SetStatus(204)
	if res, err := h.Test(ctx, o.ID, wh.ID, nil); err != nil || !res.Delivered() || res.Status != 204 {
		t.Fatalf("ping of a switched-off webhook: %+v, %v", res, err)
	}
	on := true
	up, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &on})
	if err != nil || !up.Active || up.DisabledReason != "" || up.ConsecutiveFailures != 0 {
		t.Fatalf("switched on: %+v, %v", up, err)
	}
	h.start()
	h.score(t, o.ID, 1, 80)
	rcv.WaitFor(before+2, 2*time.Second) // the ping and the new match
}

// The log keeps the newest 20.
func TestWebhookLogTrimmed(t *testing.T) {
	t.Parallel()
	h, o := ownerHooks(t, DeliveryConfig{})
	h.start()
	wh, rcv := h.webhook(t, o.ID, 0)
	ms := h.score(t, o.ID, core.DeliveryLogSize+5, 80)
	rcv.WaitFor(len(ms), 5*time.Second)
	ds := h.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(core.DeliveryLogSize))
	all, err := h.store.Deliveries(context.Background(), o.ID, wh.ID, 1000)
	if err != nil || len(ds) != core.DeliveryLogSize || len(all) != core.DeliveryLogSize {
		t.Fatalf("log shows %d, store keeps %d; want %d", len(ds), len(all), core.DeliveryLogSize)
	}
}

// A retry queued by one worker is sent by the next one after a restart;
// so is a delivery queued while no worker ran.
func TestWebhookRetryResumesAfterRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.owner(t, "a@example.com")
	cfg := DeliveryConfig{Schedule: core.RetrySchedule{300 * time.Millisecond}}
	first := newHooks(t, w, cfg)
	first.start()
	wh, rcv := first.webhook(t, o.ID, 0)
	rcv.SetStatus(500)
	first.score(t, o.ID, 1, 80)
	rcv.WaitFor(1, 2*time.Second)
	first.waitLog(t, o.ID, wh.ID, 2*time.Second, func(ds []core.Delivery) bool { return len(ds) == 1 && ds[0].Tries == 1 })
	first.stop()

	rcv.SetStatus(200)
	first.score(t, o.ID, 1, 80) // queued with no worker running
	second := newHooks(t, w, cfg)
	second.start()
	msgs := rcv.WaitFor(3, 3*time.Second)
	ds := second.waitLog(t, o.ID, wh.ID, 2*time.Second, allFinal(2))
	byID := map[string]core.Delivery{}
	for _, d := range ds {
		byID[d.ID] = d
	}
	retried := byID[msgs[0].DeliveryID]
	if retried.Status != core.DeliveryDelivered || retried.Tries != 2 || msgs[1].DeliveryID != msgs[0].DeliveryID && msgs[2].DeliveryID != msgs[0].DeliveryID {
		t.Fatalf("the retry after the restart: %+v", ds)
	}
}

// A receiver that never answers holds its own slots only: another
// webhook's messages arrive at once. In a bubble, so the latency is the
// worker's own, whatever else loads the machine.
func TestSlowReceiverDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble: the store's statement cache keeps a goroutine for the database's life
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		a, b := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
		bad, good := newInFlight(senderTimeout), newInFlight(0)
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout}, receivers{"http://127.0.0.1/bad": bad, "http://127.0.0.1/good": good}, nil)
		zero := 0
		if _, _, err := h.Create(ctx, a.ID, "http://127.0.0.1/bad", &zero, nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.Create(ctx, b.ID, "http://127.0.0.1/good", &zero, nil); err != nil {
			t.Fatal(err)
		}
		h.start()
		h.score(t, a.ID, 6, 80)
		bad.until(t, time.Second, func(got, now int) bool { return now >= DefaultWebhookPerWebhook })
		start := time.Now()
		h.score(t, b.ID, 6, 80)
		good.until(t, time.Minute, func(got, now int) bool { return got == 6 })
		if d := time.Since(start); d > time.Second {
			t.Fatalf("the good receiver waited %v", d)
		}
		if got, most := bad.counts(); got != 0 || most != DefaultWebhookPerWebhook {
			t.Fatalf("the hanging receiver answered %d and had %d messages at once, want 0 and %d", got, most, DefaultWebhookPerWebhook)
		}
	})
}

// A delivery whose match was deleted before its first try is dropped.
func TestWebhookDeliveryOfDeletedMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, o := ownerHooks(t, DeliveryConfig{})
	wh, rcv := h.webhook(t, o.ID, 0)
	m := h.score(t, o.ID, 1, 80)[0]
	if len(h.log(t, o.ID, wh.ID)) != 1 {
		t.Fatal("no delivery queued")
	}
	if err := h.w.phrases.DeletePhrase(ctx, o.ID, m.PhraseID); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitLog(t, o.ID, wh.ID, 2*time.Second, func(ds []core.Delivery) bool { return len(ds) == 0 })
	if n := len(rcv.Messages()); n != 0 {
		t.Fatalf("%d messages about a deleted match", n)
	}
}

// BenchmarkWebhookDelivery measures the worker against a local receiver
// answering 204, on a SQLite file as `earshot serve` uses by default:
// how many deliveries a second it drains from a queued backlog, and the
// latency from a score stored to the message received under a steady
// stream of scores (median and 99th percentile), and this process's peak
// heap and resident memory over both (peak-heap-MB, peak-RSS-MB; the
// receiver shares the process).
//
//	go test -run '^$' -bench WebhookDelivery -benchtime 1x ./app
func BenchmarkWebhookDelivery(b *testing.B) {
	const (
		owners   = 8    // one webhook each, all to the same receiver
		backlog  = 4000 // deliveries drained for the rate
		stream   = 400  // scores for the latency
		interval = 2 * time.Millisecond
	)
	ctx := context.Background()
	db, err := gormstore.Open("sqlite://" + b.TempDir() + "/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	ownerStore, phraseStore, matchStore := gormstore.NewOwnerStore(db), gormstore.NewPhraseStore(db), gormstore.NewMatchStore(db)
	sealer, _ := core.NewSealer(testSecretKey)

	var mu sync.Mutex
	received := map[string]time.Time{} // match id -> receipt
	arrived := make(chan struct{}, backlog+stream)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct{ Data struct{ ID string } }
		_ = json.NewDecoder(r.Body).Decode(&msg)
		mu.Lock()
		received[msg.Data.ID] = time.Now()
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		arrived <- struct{}{}
	}))
	defer rcv.Close()

	store, sender := gormstore.NewWebhookStore(db), webhooksender.New(webhooksender.Config{AllowPrivate: true})
	worker := NewDeliveryWorker(DeliveryDeps{
		Queue: store, Sender: sender, Sealer: sealer, Log: quiet,
	}, DeliveryConfig{})
	svc := NewWebhooks(WebhookDeps{Store: store, Sender: sender, Sealer: sealer, Log: quiet, Wake: worker.Poke},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 1}, AllowPrivate: true})

	type matchOf struct {
		owner, id string
		m         core.Match
	}
	var unscored []matchOf
	for i := 0; i < owners; i++ {
		o, err := core.NewOwner(fmt.Sprintf("bench%d@example.com", i), "")
		if err != nil {
			b.Fatal(err)
		}
		if err := ownerStore.CreateOwner(ctx, &o); err != nil {
			b.Fatal(err)
		}
		zero := 0
		if _, _, err := svc.Create(ctx, o.ID, fmt.Sprintf("%s/hook/%d", rcv.URL, i), &zero, nil); err != nil {
			b.Fatal(err)
		}
		p, _ := core.NewPhrase(o.ID, "acme", "x", "")
		if _, err := phraseStore.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
			b.Fatal(err)
		}
		n := (backlog + stream) / owners
		batch := make([]ports.PostMatches, n)
		for j := range batch {
			batch[j] = ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(j), Author: "ada", Title: "Looking for an acme alternative",
				Text: "We have used acme for two years and the pricing keeps going up. Any alternatives?",
				URL:  fmt.Sprintf("https://x.com/ada/status/%d", j)}, PhraseIDs: []string{p.ID}}
		}
		res, err := matchStore.SaveMatches(ctx, o.ID, core.X, batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range res.Matches {
			unscored = append(unscored, matchOf{o.ID, m.ID, m})
		}
	}
	// Interleave owners, so the backlog is spread over the webhooks.
	order := make([]matchOf, 0, len(unscored))
	per := len(unscored) / owners
	for j := 0; j < per; j++ {
		for i := 0; i < owners; i++ {
			order = append(order, unscored[i*per+j])
		}
	}
	sc := core.Score{Value: 90, Intent: core.IntentBuying, Reason: "asks for an alternative"}

	// One pass uses the whole data set, whatever b.N: run with -benchtime 1x.
	// The backlog: scored while no worker runs, then drained.
	for _, m := range order[:backlog] {
		if _, err := matchStore.SetScores(ctx, []ports.ScoreUpdate{{Match: m.m, Score: sc}}, core.QueueMatchCreated); err != nil {
			b.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stop := peakmem.Measure(b)
	b.ResetTimer()
	start := time.Now()
	go func() { defer close(done); worker.Run(runCtx) }()
	for i := 0; i < backlog; i++ {
		<-arrived
	}
	rate := backlog / time.Since(start).Seconds()
	b.StopTimer()

	// The stream: one score every interval, the worker running.
	stored := make(map[string]time.Time, stream)
	for _, m := range order[backlog : backlog+stream] {
		if _, err := matchStore.SetScores(ctx, []ports.ScoreUpdate{{Match: m.m, Score: sc}}, core.QueueMatchCreated); err != nil {
			b.Fatal(err)
		}
		stored[m.id] = time.Now()
		worker.Poke()
		time.Sleep(interval) // pacing of the stream, not a wait
	}
	for i := 0; i < stream; i++ {
		<-arrived
	}
	cancel()
	<-done
	stop()
	var lat []float64
	mu.Lock()
	for id, at := range stored {
		lat = append(lat, float64(received[id].Sub(at).Microseconds())/1000)
	}
	mu.Unlock()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(rate, "deliveries/s")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
}

// Two workers on one database, as two processes would run them, send
// each delivery once.
func TestTwoWorkersSendEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); testTwoWorkers(t, "sqlite://"+t.TempDir()+"/two.db") })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); testTwoWorkers(t, pgtest.URL(t)) })
}

func testTwoWorkers(t *testing.T, url string) {
	w1, w2 := newWorldAt(t, url), newWorldAt(t, url) // two connection pools
	o := w1.owner(t, "a@example.com")
	one, two := newHooks(t, w1, DeliveryConfig{}), newHooks(t, w2, DeliveryConfig{})
	wh, rcv := one.webhook(t, o.ID, 0)
	one.start()
	two.start()
	const n = 40
	one.score(t, o.ID, n, 80)
	two.Poke()
	msgs := rcv.WaitFor(n, 10*time.Second)
	// Either worker may make the last writes: once both are stopped,
	// every send made is recorded.
	one.settle(t)
	two.settle(t)
	if ds := one.log(t, o.ID, wh.ID); !allFinal(core.DeliveryLogSize)(ds) {
		t.Fatalf("delivery log once both workers stopped: %+v", ds)
	}
	seen := map[string]int{}
	for _, m := range rcv.Messages() {
		seen[m.DeliveryID]++
	}
	if len(msgs) < n || len(seen) != n || len(rcv.Messages()) != n {
		t.Fatalf("%d messages for %d deliveries, want %d each once", len(rcv.Messages()), len(seen), n)
	}
}

// inFlight is a receiver reached without the network, for tests in a
// synctest bubble (make it there): it answers 204 after delay and
// records the most messages it had under way at once. A delay of
// senderTimeout or more is a receiver that never answers.
type inFlight struct {
	delay    time.Duration
	changed  signal // a message began or was answered
	mu       sync.Mutex
	now, max int
	got      int
}

func newInFlight(delay time.Duration) *inFlight {
	return &inFlight{delay: delay, changed: newSignal()}
}

// receive takes one message.
func (r *inFlight) receive() ports.WebhookResult {
	r.mu.Lock()
	r.now++
	r.max = max(r.max, r.now)
	r.mu.Unlock()
	r.changed.notify()
	defer r.changed.notify()
	if r.delay >= senderTimeout {
		<-time.After(senderTimeout) // the sender gives up
		r.mu.Lock()
		r.now--
		r.mu.Unlock()
		return ports.WebhookResult{Error: "timeout", Duration: senderTimeout}
	}
	<-time.After(r.delay) // the receiver's answer time, on the bubble's clock
	r.mu.Lock()
	r.now--
	r.got++
	r.mu.Unlock()
	return ports.WebhookResult{Status: http.StatusNoContent, Duration: r.delay}
}

func (r *inFlight) counts() (got, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got, r.max
}

// until returns once ok holds of the messages answered and those under
// way. within is on the bubble's clock, which moves only while every
// goroutine in the bubble waits.
func (r *inFlight) until(t *testing.T, within time.Duration, ok func(got, now int) bool) {
	t.Helper()
	state := func() (int, int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.got, r.now
	}
	waitUntil(t, within, r.changed, func() bool { return ok(state()) }, func() string {
		got, now := state()
		return fmt.Sprintf("%d messages answered, %d under way", got, now)
	})
}

// receivers is a webhook sender over inFlight receivers, one per URL.
type receivers map[string]*inFlight

func (rs receivers) Send(_ context.Context, m ports.WebhookMessage) ports.WebhookResult {
	r, ok := rs[m.URL]
	if !ok {
		return ports.WebhookResult{Error: "connect"}
	}
	return r.receive()
}

// senderTimeout is the answer wait of receivers; tests over them give
// the worker the same (DeliveryConfig.Timeout).
const senderTimeout = 10 * time.Second

// A receiver that answers within fastAnswer gets up to FastPerWebhook
// sends at once; one that answers slower keeps PerWebhook. In a bubble,
// so the answer times are exact whatever else loads the machine.
func TestFastReceiverGetsMoreSlots(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		delay time.Duration
		n     int
		most  int
	}{
		{"fast", 20 * time.Millisecond, 40, DefaultWebhookFastPerWebhook},
		{"slow", fastAnswer + 50*time.Millisecond, 6, DefaultWebhookPerWebhook},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t) // outside the bubble, as in TestSlowReceiverDoesNotDelayOthers
			synctest.Test(t, func(t *testing.T) {
				o := w.owner(t, c.name+"@example.com")
				const url = "http://127.0.0.1/hook"
				rcv := newInFlight(c.delay)
				h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout}, receivers{url: rcv}, nil)
				zero := 0
				if _, _, err := h.Create(context.Background(), o.ID, url, &zero, nil); err != nil {
					t.Fatal(err)
				}
				h.score(t, o.ID, c.n, 80)
				h.start()
				rcv.until(t, time.Minute, func(got, _ int) bool { return got == c.n })
				if _, most := rcv.counts(); most != c.most {
					t.Fatalf("at most %d sends at once, want %d", most, c.most)
				}
			})
		})
	}
}

// When the pool is the bound, each destination with work gets an equal
// share of it: three fast receivers, each allowed the whole pool, never
// have more than two of four sends at a time while the other two still
// have deliveries held, so none waits behind the others' backlogs (a
// webhook beside two chat channels taking the same matches).
func TestPoolSharedFairlyBetweenDestinations(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble, as in TestSlowReceiverDoesNotDelayOthers
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		// n a destination, so that the first claim (Workers*claimAhead
		// rows at most) holds every delivery of the three.
		const workers, n = 4, 20
		rcv := &sharedPool{n: n, now: map[string]int{}, got: map[string]int{}, changed: newSignal()}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, Workers: workers, FastPerWebhook: workers}, rcv, nil)
		for _, name := range []string{"a", "b", "c"} {
			o := w.owner(t, name+"@example.com")
			zero := 0
			if _, _, err := h.Create(ctx, o.ID, "http://127.0.0.1/"+name, &zero, nil); err != nil {
				t.Fatal(err)
			}
			rcv.urls = append(rcv.urls, "http://127.0.0.1/"+name)
			h.score(t, o.ID, n, 80)
		}
		h.start()
		waitUntil(t, time.Minute, rcv.changed, func() bool { return rcv.done() == 3*n }, func() string { return fmt.Sprintf("%d of %d answered", rcv.done(), 3*n) })
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		if len(rcv.over) > 0 {
			t.Fatalf("a destination took more than its share while the others had work: %v", rcv.over)
		}
	})
}

// sharedPool is three receivers answering 2xx after 20 ms, which note
// every send that makes one of them have more than 2 under way while
// each other has messages yet to receive.
type sharedPool struct {
	n        int
	urls     []string
	changed  signal
	mu       sync.Mutex
	now, got map[string]int
	over     []string
}

func (p *sharedPool) Send(_ context.Context, m ports.WebhookMessage) ports.WebhookResult {
	const delay = 20 * time.Millisecond
	p.mu.Lock()
	p.now[m.URL]++
	if p.now[m.URL] > 2 && !slices.ContainsFunc(p.urls, func(u string) bool { return u != m.URL && p.got[u]+p.now[u] >= p.n }) {
		p.over = append(p.over, fmt.Sprintf("%s with %d at once", m.URL, p.now[m.URL]))
	}
	p.mu.Unlock()
	<-time.After(delay) // the receiver's answer time, on the bubble's clock
	p.mu.Lock()
	p.now[m.URL]--
	p.got[m.URL]++
	p.mu.Unlock()
	p.changed.notify()
	return ports.WebhookResult{Status: http.StatusNoContent, Duration: delay}
}

func (p *sharedPool) done() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[p.urls[0]] + p.got[p.urls[1]] + p.got[p.urls[2]]
}

// A webhook switched off after five failed deliveries in a row gets no
// more of the deliveries the worker had claimed for it: they stay
// queued, for when it is switched on again, rather than each spend a try
// on a receiver known to be down. Only the send under way when the
// switch-off was stored goes out.
func TestSwitchOffLeavesClaimedDeliveriesQueued(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble, as in TestSlowReceiverDoesNotDelayOthers
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		o := w.owner(t, "a@example.com")
		const url, n = "http://127.0.0.1/hook", 12
		rcv := &downReceiver{}
		off := newSignal()
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, PerWebhook: 1, Schedule: core.RetrySchedule{}}, rcv,
			func(context.Context, core.Webhook) { off.notify() })
		zero := 0
		wh, _, err := h.Create(ctx, o.ID, url, &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.score(t, o.ID, n, 80)
		h.start()
		select {
		case <-off:
		case <-time.After(time.Minute):
			t.Fatal("the webhook was not switched off")
		}
		// Time enough for every claimed delivery to have been sent, a
		// second each, on the bubble's clock.
		<-time.After(2 * n * time.Second)
		h.stop()
		if got := rcv.answered(); got != 6 {
			t.Fatalf("%d messages sent to a webhook switched off after the fifth, want 6", got)
		}
		queued := 0
		for _, d := range h.log(t, o.ID, wh.ID) {
			if d.Status == core.DeliveryQueued {
				queued++
			}
		}
		if queued != n-6 {
			t.Fatalf("%d deliveries left queued, want %d", queued, n-6)
		}
	})
}

// downReceiver answers every message 500 after a second, on the bubble's
// clock.
type downReceiver struct {
	mu  sync.Mutex
	got int
}

func (r *downReceiver) Send(context.Context, ports.WebhookMessage) ports.WebhookResult {
	<-time.After(time.Second)
	r.mu.Lock()
	r.got++
	r.mu.Unlock()
	return ports.WebhookResult{Status: http.StatusInternalServerError, Error: "http 500", Duration: time.Second}
}

func (r *downReceiver) answered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// A webhook its owner switches off gets none of the deliveries the
// worker holds for it: they stay queued until it is switched on again.
func TestOwnerSwitchOffLeavesClaimedDeliveriesQueued(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		o := w.owner(t, "a@example.com")
		const url, n = "http://127.0.0.1/hook", 12
		rcv := &downReceiver{}
		h := newHooksVia(t, w, DeliveryConfig{Timeout: senderTimeout, PerWebhook: 1}, rcv, nil)
		zero := 0
		wh, _, err := h.Create(ctx, o.ID, url, &zero, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.score(t, o.ID, n, 80)
		h.start()
		// The first send is under way, the rest are held.
		<-time.After(500 * time.Millisecond)
		off := false
		if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off}); err != nil {
			t.Fatal(err)
		}
		<-time.After(2 * n * time.Second)
		h.stop()
		if got := rcv.answered(); got != 1 {
			t.Fatalf("%d messages sent to a webhook its owner switched off during the first, want 1", got)
		}
		queued := 0
		for _, d := range h.log(t, o.ID, wh.ID) {
			if d.Status == core.DeliveryQueued {
				queued++
			}
		}
		if queued != n {
			t.Fatalf("%d deliveries queued, want %d", queued, n)
		}
	})
}
