// Package bustest is the contract suite of ports.Publisher and
// ports.Subscriber: every bus backend runs it through Run, with a Features
// value saying what the backend does not promise.
//
// Each case publishes on topics of its own (the test name plus a random
// suffix), so cases run in parallel and runs sharing a broker never see
// each other's messages. Delivery order is never assumed.
package bustest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Features says what a backend promises beyond what every bus must do.
type Features struct {
	// Persistent: events published while a consumer group has no running
	// subscriber are kept for the group, once it has subscribed before,
	// and delivered when a subscriber of the group returns (an AMQP
	// durable queue).
	Persistent bool
	// SharedGroups: subscribers of one group share the work, each event
	// handled once in total.
	SharedGroups bool
	// Capacity: the backend holds at most this many events per consumer
	// group, published and not yet acknowledged, and drops the rest,
	// reporting them to Backend.Dropped. 0: the backend drops nothing
	// (a broker keeps its queues itself).
	Capacity int
}

// Backend is one bus under test.
type Backend struct {
	Publisher ports.Publisher
	// Subscriber returns a subscriber in consumer group. Each call may
	// stand for a new replica (a new connection); subscribers of one
	// group must reach the same events as Publisher publishes.
	Subscriber func(t *testing.T, group string) ports.Subscriber
	Features   Features
	// Dropped returns how many events of topic the backend reported
	// dropped so far; needed when Features.Capacity is set.
	Dropped func(topic string) int
}

// Factory returns a fresh backend for one test. It releases what it opens
// with t.Cleanup. Subscriptions end with t.Context, before any cleanup.
type Factory func(t *testing.T) Backend

// Wait bounds every wait for a delivery. Generous, because a shared,
// loaded machine makes brokers slow; passing cases never wait this long.
var Wait = 20 * time.Second

// quiet is how long a case waits to be sure something does not happen.
const quiet = 500 * time.Millisecond

// Run runs the contract suite against backends made by f.
func Run(t *testing.T, f Factory) {
	cases := []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"PublishReceiveOne", testPublishReceiveOne},
		{"PublishNothing", testPublishNothing},
		{"PublishWithoutSubscribers", testPublishWithoutSubscribers},
		{"InvalidTopic", testInvalidTopic},
		{"ManyNoneLost", testManyNoneLost},
		{"HandlerErrorRedelivers", testHandlerErrorRedelivers},
		{"GroupSharesWork", testGroupSharesWork},
		{"EveryGroupGetsEveryEvent", testEveryGroupGetsEveryEvent},
		{"CancelStopsDelivery", testCancelStopsDelivery},
		{"KeptWhileGroupAway", testKeptWhileGroupAway},
		{"ConcurrentPublishers", testConcurrentPublishers},
		{"FullDropsAndCounts", testFullDropsAndCounts},
		{"UnderscoredNamesApart", testUnderscoredNamesApart},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, f)
		})
	}
}

func testPublishReceiveOne(t *testing.T, f Factory) {
	b := f(t)
	topic := Topic(t)
	r := newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, r.handler("a"))

	want := ports.Event{Topic: topic, Key: "match-1", Payload: []byte(`{"match_id":"m1"}`)}
	publish(t, b.Publisher, want)
	r.waitKeys(t, "match-1")

	got := r.calls()[0].event
	if got.Topic != want.Topic || got.Key != want.Key || string(got.Payload) != string(want.Payload) {
		t.Fatalf("received %+v, want %+v", got, want)
	}
}

func testPublishNothing(t *testing.T, f Factory) {
	b := f(t)
	if err := b.Publisher.Publish(t.Context()); err != nil {
		t.Fatalf("Publish() with no events: %v", err)
	}
}

func testPublishWithoutSubscribers(t *testing.T, f Factory) {
	b := f(t)
	publish(t, b.Publisher, ports.Event{Topic: Topic(t), Key: "k", Payload: []byte(`{}`)})
}

func testInvalidTopic(t *testing.T, f Factory) {
	b := f(t)
	sub := b.Subscriber(t, "g")
	for _, topic := range []string{"", "has space", "slash/not/allowed"} {
		err := b.Publisher.Publish(t.Context(), ports.Event{Topic: topic, Payload: []byte(`{}`)})
		if !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Publish to topic %q: got %v, want kind %v", topic, err, core.KindInvalid)
		}
		err = sub.Subscribe(t.Context(), topic, func(context.Context, ports.Event) error { return nil })
		if !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Subscribe to topic %q: got %v, want kind %v", topic, err, core.KindInvalid)
		}
	}
}

func testManyNoneLost(t *testing.T, f Factory) {
	const n, batch = 1000, 100
	b := f(t)
	topic := Topic(t)
	r := newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, r.handler("a"))

	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%04d", i)
	}
	// Batches and single events both count: a backend may take each path
	// differently.
	for i := 0; i < n/2; i += batch {
		events := make([]ports.Event, batch)
		for j := range events {
			events[j] = ports.Event{Topic: topic, Key: keys[i+j], Payload: []byte(`{}`)}
		}
		publish(t, b.Publisher, events...)
	}
	for _, k := range keys[n/2:] {
		publish(t, b.Publisher, ports.Event{Topic: topic, Key: k, Payload: []byte(`{}`)})
	}
	r.waitKeys(t, keys...)
	if got := len(r.byKey()); got != n {
		t.Fatalf("received %d distinct keys, want %d", got, n)
	}
}

func testHandlerErrorRedelivers(t *testing.T, f Factory) {
	b := f(t)
	topic := Topic(t)
	var mu sync.Mutex
	attempts := map[string]int{}
	r := newRecorder()
	ok := r.handler("a")
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, func(ctx context.Context, e ports.Event) error {
		if ctx == nil {
			t.Error("handler got a nil ctx")
		}
		mu.Lock()
		attempts[e.Key]++
		n := attempts[e.Key]
		mu.Unlock()
		if n < 3 {
			return fmt.Errorf("attempt %d of %s fails", n, e.Key)
		}
		return ok(ctx, e)
	})
	publish(t, b.Publisher,
		ports.Event{Topic: topic, Key: "a", Payload: []byte(`{}`)},
		ports.Event{Topic: topic, Key: "b", Payload: []byte(`{}`)})
	r.waitKeys(t, "a", "b")

	// Acknowledged events are not delivered again.
	time.Sleep(quiet)
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"a", "b"} {
		if attempts[k] != 3 {
			t.Errorf("event %s: %d attempts, want 3 (two failures, one success)", k, attempts[k])
		}
	}
}

func testGroupSharesWork(t *testing.T, f Factory) {
	b := f(t)
	if !b.Features.SharedGroups {
		t.Skip("backend does not share a group's work between subscribers")
	}
	const n = 100
	topic := Topic(t)
	r := newRecorder()
	// Two replicas of one service; a small pause per event lets the other
	// one take the next.
	for _, replica := range []string{"replica-1", "replica-2"} {
		h := r.handler(replica)
		subscribe(t, t.Context(), b.Subscriber(t, "workers"), topic, func(ctx context.Context, e ports.Event) error {
			time.Sleep(2 * time.Millisecond)
			return h(ctx, e)
		})
	}
	keys := publishN(t, b.Publisher, topic, n)
	r.waitKeys(t, keys...)
	time.Sleep(quiet)

	calls := r.calls()
	if len(calls) != n {
		t.Errorf("%d deliveries for %d events, want each handled once in total", len(calls), n)
	}
	per := map[string]int{}
	for _, c := range calls {
		per[c.subscriber]++
	}
	if per["replica-1"] == 0 || per["replica-2"] == 0 {
		t.Errorf("work not shared: %v", per)
	}
}

func testEveryGroupGetsEveryEvent(t *testing.T, f Factory) {
	const n = 50
	b := f(t)
	topic := Topic(t)
	alpha, beta := newRecorder(), newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "alpha"), topic, alpha.handler("alpha"))
	subscribe(t, t.Context(), b.Subscriber(t, "beta"), topic, beta.handler("beta"))
	keys := publishN(t, b.Publisher, topic, n)
	alpha.waitKeys(t, keys...)
	beta.waitKeys(t, keys...)
}

func testCancelStopsDelivery(t *testing.T, f Factory) {
	b := f(t)
	topic := Topic(t)
	first := newRecorder()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	subscribe(t, ctx, b.Subscriber(t, "g"), topic, first.handler("first"))
	publish(t, b.Publisher, ports.Event{Topic: topic, Key: "before", Payload: []byte(`{}`)})
	first.waitKeys(t, "before")

	cancel()
	publish(t, b.Publisher, ports.Event{Topic: topic, Key: "after", Payload: []byte(`{}`)})
	time.Sleep(quiet)
	if got := first.byKey()["after"]; got != 0 {
		t.Fatalf("handler called %d times after its ctx ended", got)
	}

	// The topic still works for a new subscription.
	second := newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, second.handler("second"))
	publish(t, b.Publisher, ports.Event{Topic: topic, Key: "later", Payload: []byte(`{}`)})
	second.waitKeys(t, "later")
}

func testKeptWhileGroupAway(t *testing.T, f Factory) {
	b := f(t)
	if !b.Features.Persistent {
		t.Skip("backend keeps no events for a group without subscribers")
	}
	topic := Topic(t)
	ctx, cancel := context.WithCancel(t.Context())
	subscribe(t, ctx, b.Subscriber(t, "g"), topic, newRecorder().handler("gone"))
	cancel()

	keys := publishN(t, b.Publisher, topic, 10)
	back := newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, back.handler("back"))
	back.waitKeys(t, keys...)
}

func testConcurrentPublishers(t *testing.T, f Factory) {
	const publishers, each = 8, 50
	b := f(t)
	topic := Topic(t)
	r := newRecorder()
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, r.handler("a"))

	var wg sync.WaitGroup
	errs := make(chan error, publishers)
	var keys []string
	for p := range publishers {
		for i := range each {
			keys = append(keys, fmt.Sprintf("p%d-%03d", p, i))
		}
		wg.Go(func() {
			for i := range each {
				e := ports.Event{Topic: topic, Key: fmt.Sprintf("p%d-%03d", p, i), Payload: []byte(`{}`)}
				if err := b.Publisher.Publish(t.Context(), e); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Publish: %v", err)
	}
	r.waitKeys(t, keys...)
}

// Topic returns a topic name unique to this test and run: the test name,
// cleaned to what brokers accept, and a random suffix.
func Topic(t *testing.T) string {
	t.Helper()
	name := unsafeChars.ReplaceAllString(t.Name(), ".")
	if len(name) > 120 {
		name = name[len(name)-120:]
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return name + "." + hex.EncodeToString(b[:])
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func subscribe(t *testing.T, ctx context.Context, s ports.Subscriber, topic string, h ports.Handler) {
	t.Helper()
	if err := s.Subscribe(ctx, topic, h); err != nil {
		t.Fatalf("Subscribe(%s): %v", topic, err)
	}
}

func publish(t *testing.T, p ports.Publisher, events ...ports.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Wait)
	defer cancel()
	if err := p.Publish(ctx, events...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

// publishN publishes n events in one call and returns their keys.
func publishN(t *testing.T, p ports.Publisher, topic string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	events := make([]ports.Event, n)
	for i := range events {
		keys[i] = fmt.Sprintf("k%03d", i)
		events[i] = ports.Event{Topic: topic, Key: keys[i], Payload: []byte(`{}`)}
	}
	publish(t, p, events...)
	return keys
}

// recorder collects successful deliveries from any number of handlers.
type recorder struct {
	mu      sync.Mutex
	log     []call
	changed chan struct{} // receives after each delivery, never blocks the handler
}

type call struct {
	subscriber string
	event      ports.Event
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}, 1)}
}

// handler returns a handler that records each event as delivered to name.
func (r *recorder) handler(name string) ports.Handler {
	return func(_ context.Context, e ports.Event) error {
		r.mu.Lock()
		r.log = append(r.log, call{subscriber: name, event: e})
		r.mu.Unlock()
		select {
		case r.changed <- struct{}{}:
		default:
		}
		return nil
	}
}

func (r *recorder) calls() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.log...)
}

// byKey counts deliveries per event key.
func (r *recorder) byKey() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]int, len(r.log))
	for _, c := range r.log {
		m[c.event.Key]++
	}
	return m
}

// waitKeys waits until every key was delivered at least once.
func (r *recorder) waitKeys(t *testing.T, keys ...string) {
	t.Helper()
	deadline := time.NewTimer(Wait)
	defer deadline.Stop()
	for {
		got := r.byKey()
		var missing []string
		for _, k := range keys {
			if got[k] == 0 {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline.C:
			n := len(missing)
			if n > 5 {
				missing = append(missing[:5], "...")
			}
			t.Fatalf("after %v, %d of %d events not delivered: %v", Wait, n, len(keys), missing)
		}
	}
}

// testFullDropsAndCounts publishes 100,000 events while the only handler
// is stuck: a bounded backend keeps its goroutines under a bound that
// does not grow with the backlog, drops every event past its capacity
// and reports each one, delivers the ones it kept once the handler
// moves, and takes events again once they are acknowledged.
func testFullDropsAndCounts(t *testing.T, f Factory) {
	b := f(t)
	capacity := b.Features.Capacity
	if capacity == 0 {
		t.Skip("the backend drops nothing: no bound to reach")
	}
	const n, batch = 100_000, 1000
	topic := Topic(t)
	release := make(chan struct{})
	var handled atomic.Int64
	subscribe(t, t.Context(), b.Subscriber(t, "g"), topic, func(ctx context.Context, _ ports.Event) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		handled.Add(1)
		return nil
	})
	before := runtime.NumGoroutine()
	events := make([]ports.Event, batch)
	for i := 0; i < n; i += batch {
		for j := range events {
			events[j] = ports.Event{Topic: topic, Key: fmt.Sprintf("k%d", i+j), Payload: []byte(`{}`)}
		}
		publish(t, b.Publisher, events...)
	}
	// Other cases run beside this one, hence the slack; an unbounded
	// backend parks goroutines by the hundred thousand here.
	if g, bound := runtime.NumGoroutine(), before+3*capacity+2000; g > bound {
		t.Fatalf("%d goroutines with %d events waiting, want at most %d", g, n, bound)
	}
	if got := b.Dropped(topic); got != n-capacity {
		t.Fatalf("%d events reported dropped, want %d", got, n-capacity)
	}
	close(release)
	waitCount(t, &handled, capacity)
	// Acknowledged events free their room: the next ones are kept.
	publishN(t, b.Publisher, topic, capacity)
	waitCount(t, &handled, 2*capacity)
	if got := b.Dropped(topic); got != n-capacity {
		t.Fatalf("%d events reported dropped after the handler caught up, want %d", got, n-capacity)
	}
}

// waitCount waits until c reaches want.
func waitCount(t *testing.T, c *atomic.Int64, want int) {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for c.Load() < int64(want) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d events handled, want %d", Wait, c.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testUnderscoredNamesApart subscribes pairs of (topic, group) that read
// alike once joined by "_": topic X_b in group c and topic X in group b_c,
// and topic X_ in group b and topic X in group _b. Each subscription gets
// every event of its own topic and none of another's; a broker that named
// both queues of a pair X_b_c (or X__b) would have them compete for one
// queue fed by both topics.
func testUnderscoredNamesApart(t *testing.T, f Factory) {
	const n = 20
	b := f(t)
	base := Topic(t)
	subs := []struct {
		topic, group string
		r            *recorder
	}{
		{base + "_b", "c", newRecorder()}, {base, "b_c", newRecorder()},
		{base + "_", "b", newRecorder()}, {base, "_b", newRecorder()},
	}
	all := newRecorder()
	for _, s := range subs {
		own, any := s.r.handler(s.group), all.handler(s.group)
		subscribe(t, t.Context(), b.Subscriber(t, s.group), s.topic, func(ctx context.Context, e ports.Event) error {
			_ = any(ctx, e)
			return own(ctx, e)
		})
	}
	keys := map[string][]string{} // topic -> its events' keys
	var events []ports.Event
	for _, topic := range []string{base + "_b", base, base + "_"} {
		for i := range n {
			k := fmt.Sprintf("%s-%02d", topic, i)
			keys[topic] = append(keys[topic], k)
			events = append(events, ports.Event{Topic: topic, Key: k, Payload: []byte(`{}`)})
		}
	}
	publish(t, b.Publisher, events...)

	// Every event reaches some subscription either way; which one tells.
	var every []string
	for _, ks := range keys {
		every = append(every, ks...)
	}
	all.waitKeys(t, every...)
	for _, s := range subs {
		for _, c := range s.r.calls() {
			if !slices.Contains(keys[s.topic], c.event.Key) {
				t.Fatalf("the subscription to %s in group %s got event %s of another topic", s.topic, s.group, c.event.Key)
			}
		}
	}
	for _, s := range subs {
		s.r.waitKeys(t, keys[s.topic]...)
	}
}
