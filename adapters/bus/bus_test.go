package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// amqpURL is the broker for the AMQP half of the tests, e.g.
// amqp://guest:guest@127.0.0.1:5672/.
func amqpURL(t *testing.T) string {
	u := os.Getenv("EARSHOT_TEST_AMQP_URL")
	if u == "" {
		t.Skip("EARSHOT_TEST_AMQP_URL not set: AMQP tests need a RabbitMQ")
	}
	return u
}

func TestContract(t *testing.T) {
	backends := []struct {
		name    string
		factory bustest.Factory
	}{
		{"memory", memoryBackend},
		{"amqp", amqpBackend},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "amqp" {
				amqpURL(t)
			}
			bustest.Run(t, b.factory)
		})
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func openBus(t *testing.T, url string, cfg Config) *Bus {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	b, err := Open(url, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// memoryBackend shares one in-process bus; groups are views on it.
func memoryBackend(t *testing.T) bustest.Backend {
	var mu sync.Mutex
	dropped := map[string]int{}
	b := openBus(t, "memory://", Config{Dropped: func(topic string, n int) {
		mu.Lock()
		dropped[topic] += n
		mu.Unlock()
	}})
	return bustest.Backend{
		Publisher:  b,
		Subscriber: func(_ *testing.T, group string) ports.Subscriber { return b.Group(group) },
		Features:   bustest.Features{Persistent: false, SharedGroups: true, Capacity: DefaultMemoryCapacity},
		Dropped: func(topic string) int {
			mu.Lock()
			defer mu.Unlock()
			return dropped[topic]
		},
	}
}

// amqpBackend opens a bus per subscriber, as separate replicas would, all
// under a prefix unique to the test, and deletes the broker objects the
// test created.
func amqpBackend(t *testing.T) bustest.Backend {
	url := amqpURL(t)
	prefix := "earshot-test." + randomHex(t) + "."
	names := &brokerNames{}
	t.Cleanup(func() { names.delete(t, url) }) // runs last: after every Close
	pub := openBus(t, url, Config{QueuePrefix: prefix})
	return bustest.Backend{
		Publisher: recordingPublisher{pub, names, prefix},
		Subscriber: func(t *testing.T, group string) ports.Subscriber {
			b := openBus(t, url, Config{QueuePrefix: prefix, Group: group})
			return recordingSubscriber{b, names, prefix, group}
		},
		Features: bustest.Features{Persistent: true, SharedGroups: true},
	}
}

func randomHex(t *testing.T) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// brokerNames remembers the exchanges and queues a test made, since AMQP
// cannot list them by prefix.
type brokerNames struct {
	mu        sync.Mutex
	exchanges map[string]bool
	queues    map[string]bool
}

func (n *brokerNames) add(exchange, queue string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.exchanges == nil {
		n.exchanges, n.queues = map[string]bool{}, map[string]bool{}
	}
	n.exchanges[exchange] = true
	if queue != "" {
		n.queues[queue] = true
	}
}

func (n *brokerNames) delete(t *testing.T, url string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.exchanges) == 0 {
		return
	}
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	// A failed delete closes the channel, so the first error ends it.
	for q := range n.queues {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			t.Logf("cleanup: delete queue %s: %v", q, err)
			return
		}
	}
	for e := range n.exchanges {
		if err := ch.ExchangeDelete(e, false, false); err != nil {
			t.Logf("cleanup: delete exchange %s: %v", e, err)
			return
		}
	}
}

type recordingPublisher struct {
	*Bus
	names  *brokerNames
	prefix string
}

func (p recordingPublisher) Publish(ctx context.Context, events ...ports.Event) error {
	for _, e := range events {
		p.names.add(p.prefix+e.Topic, "")
	}
	return p.Bus.Publish(ctx, events...)
}

type recordingSubscriber struct {
	*Bus
	names  *brokerNames
	prefix string
	group  string
}

func (s recordingSubscriber) Subscribe(ctx context.Context, topic string, h ports.Handler) error {
	s.names.add(s.prefix+topic, queueName(s.prefix, topic, s.group))
	return s.Bus.Subscribe(ctx, topic, h)
}

// TestLifecycle covers what the port leaves to the adapter: Ping, Close
// and use after Close, on both backends.
func TestLifecycle(t *testing.T) {
	for _, name := range []string{"memory", "amqp"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := "memory://"
			if name == "amqp" {
				url = amqpURL(t)
			}
			b, err := Open(url, Config{Logger: testLogger(t), QueuePrefix: "earshot-test." + randomHex(t) + "."})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Ping(t.Context()); err != nil {
				t.Fatalf("Ping on an open bus: %v", err)
			}

			// Close waits for a running handler, whose ctx ends first.
			topic := bustest.Topic(t)
			started, finished := make(chan struct{}), make(chan struct{})
			err = b.Subscribe(t.Context(), topic, func(ctx context.Context, e ports.Event) error {
				close(started)
				<-ctx.Done()
				close(finished)
				return ctx.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "k"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-started:
			case <-time.After(bustest.Wait):
				t.Fatal("handler not called")
			}
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			select {
			case <-finished:
			default:
				t.Fatal("Close returned before the running handler")
			}
			if err := b.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}

			if err := b.Ping(t.Context()); !core.IsKind(err, core.KindUnavailable) {
				t.Errorf("Ping after Close: %v, want kind %v", err, core.KindUnavailable)
			}
			if err := b.Publish(t.Context(), ports.Event{Topic: topic}); !core.IsKind(err, core.KindUnavailable) {
				t.Errorf("Publish after Close: %v, want kind %v", err, core.KindUnavailable)
			}
			err = b.Subscribe(t.Context(), topic, func(context.Context, ports.Event) error { return nil })
			if !core.IsKind(err, core.KindUnavailable) {
				t.Errorf("Subscribe after Close: %v, want kind %v", err, core.KindUnavailable)
			}
			if name == "amqp" {
				deleteObjects(t, url, b.cfg.QueuePrefix+topic, queueName(b.cfg.QueuePrefix, topic, DefaultGroup))
			}
		})
	}
}

func deleteObjects(t *testing.T, url, exchange, queue string) {
	n := &brokerNames{}
	n.add(exchange, queue)
	n.delete(t, url)
}

func TestOpenErrors(t *testing.T) {
	const secret = "s3cr3t-pa55"
	tests := []struct {
		url  string
		kind core.Kind
	}{
		{"redis://localhost:6379", core.KindInvalid},
		{"amqp://user:" + secret + "@127.0.0.1:bad/", core.KindInvalid},
		{"amqp://user:" + secret + "@[::1/", core.KindInvalid},
		// Nothing listens on port 1 of the loopback: refused at once.
		{"amqp://user:" + secret + "@127.0.0.1:1/", core.KindUnavailable},
	}
	for _, tt := range tests {
		b, err := Open(tt.url, Config{Logger: testLogger(t)})
		if err == nil {
			_ = b.Close()
			t.Errorf("Open(%s) succeeded", tt.url)
			continue
		}
		if !core.IsKind(err, tt.kind) {
			t.Errorf("Open(%s): %v, want kind %v", tt.url, err, tt.kind)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
	if _, err := Open("memory://", Config{Group: "no spaces"}); !core.IsKind(err, core.KindInvalid) {
		t.Errorf("Open with an invalid group: %v", err)
	}
}

func TestHandlerPanicIsRetried(t *testing.T) {
	b := openBus(t, "memory://", Config{})
	topic := bustest.Topic(t)
	var mu sync.Mutex
	calls := 0
	done := make(chan struct{})
	err := b.Subscribe(t.Context(), topic, func(context.Context, ports.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			panic("boom")
		}
		close(done)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(t.Context(), ports.Event{Topic: topic}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(bustest.Wait):
		t.Fatal("event not retried after a handler panic")
	}
}

func TestPublishHonoursContext(t *testing.T) {
	b := openBus(t, "memory://", Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := b.Publish(ctx, ports.Event{Topic: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Publish with an ended ctx: %v", err)
	}
}

func TestRetryDelay(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{1, retryMin},
		{2, 2 * retryMin},
		{3, 4 * retryMin},
		{100, retryMax},
	}
	for _, tt := range tests {
		if got := retryDelay(tt.failures); got != tt.want {
			t.Errorf("retryDelay(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

// TestQueueNamesKept: the queues earshot itself declares keep their names,
// so a running deployment's queues do not move on upgrade. server/wire.go
// subscribes app.TopicMatchStored ("match.stored") in DefaultGroup under
// EARSHOT_BUS_PREFIX (default "earshot"); releases before 2026-11-24 also
// consumed "match.created", whose idle queue operators are told to delete
// by that name. Any topic and group without "_" keep the old form.
func TestQueueNamesKept(t *testing.T) {
	if DefaultGroup != "earshot" {
		t.Fatalf("DefaultGroup = %q, want earshot", DefaultGroup)
	}
	tests := []struct{ prefix, topic, group, want string }{
		{"earshot", "match.stored", DefaultGroup, "earshotmatch.stored_earshot"},
		{"earshot", "match.created", DefaultGroup, "earshotmatch.created_earshot"},
		{"", "match.stored", DefaultGroup, "match.stored_earshot"},
		{"cluster-0a1b2c3d", "match.stored", DefaultGroup, "cluster-0a1b2c3dmatch.stored_earshot"},
		// A prefix may hold "_" (EARSHOT_BUS_PREFIX allows it): it is kept as is.
		{"prod_eu_", "match.stored", DefaultGroup, "prod_eu_match.stored_earshot"},
		{"p.", "orders:v1-x", "billing.svc", "p.orders:v1-x_billing.svc"},
	}
	for _, tt := range tests {
		if got := queueName(tt.prefix, tt.topic, tt.group); got != tt.want {
			t.Errorf("queueName(%q, %q, %q) = %q, want %q", tt.prefix, tt.topic, tt.group, got, tt.want)
		}
	}

	// The broker gets that very name.
	url := amqpURL(t)
	prefix := "earshot-test." + randomHex(t) + "."
	b := openBus(t, url, Config{QueuePrefix: prefix})
	t.Cleanup(func() { deleteObjects(t, url, prefix+"match.stored", prefix+"match.stored_earshot") })
	if err := b.Subscribe(t.Context(), "match.stored", func(context.Context, ports.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !brokerHas(t, url, "queue", prefix+"match.stored_earshot") {
		t.Fatalf("no queue %s on the broker", prefix+"match.stored_earshot")
	}
}

// TestQueueNamesApart: names holding "_" that the old form mixed up get
// different queues, and none of them takes the old form of another.
func TestQueueNamesApart(t *testing.T) {
	pairs := [][2][2]string{
		{{"a_b", "c"}, {"a", "b_c"}},
		{{"a_", "b"}, {"a", "_b"}},
		{{"a", "b"}, {"a", "b_"}},
		{{"a_:b", "c"}, {"a", ":b_c"}},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		for _, tg := range p {
			q := queueName("x", tg[0], tg[1])
			if other, ok := seen[q]; ok && other != tg {
				t.Errorf("topic %q in group %q and topic %q in group %q share queue %q", tg[0], tg[1], other[0], other[1], q)
			}
			seen[q] = tg
		}
	}
}

// TestNameLengths: AMQP names hold at most 255 bytes, and the AMQP client
// would cut a longer one to its length modulo 256 (256 bytes becomes "",
// a fresh server-named queue per subscriber). Up to 255 works; past it,
// Publish and Subscribe refuse with KindInvalid, on both backends, and
// the broker is not touched.
func TestNameLengths(t *testing.T) {
	for _, name := range []string{"memory", "amqp"} {
		t.Run(name, func(t *testing.T) {
			url := "memory://"
			if name == "amqp" {
				url = amqpURL(t)
			}
			prefix := "earshot-test." + randomHex(t) + "." // 22 bytes
			long := func(c string, n int) string { return strings.Repeat(c, n) }
			names := &brokerNames{}
			if name == "amqp" {
				t.Cleanup(func() { names.delete(t, url) })
			}

			// Queue: 22 + 200 + 1 + 32 = 255 bytes works.
			topic, group := long("t", 195)+randomHex(t)[:5], long("g", 32)
			names.add(prefix+topic, queueName(prefix, topic, group))
			b := openBus(t, url, Config{QueuePrefix: prefix, Group: group})
			if q := queueName(prefix, topic, group); len(q) != 255 {
				t.Fatalf("queue name of %d bytes, want 255", len(q))
			}
			got := make(chan string, 1)
			if err := b.Subscribe(t.Context(), topic, func(_ context.Context, e ports.Event) error {
				got <- e.Key
				return nil
			}); err != nil {
				t.Fatalf("Subscribe with a 255-byte queue name: %v", err)
			}
			if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "k"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-got:
			case <-time.After(bustest.Wait):
				t.Fatal("event not delivered through a 255-byte queue name")
			}

			// One byte more is refused, before the broker sees anything.
			topic2 := long("u", 195) + randomHex(t)[:5]
			names.add(prefix+topic2, "")
			err := b.Group(group+"g").Subscribe(t.Context(), topic2, func(context.Context, ports.Event) error { return nil })
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(err.Error(), "256 bytes") {
				t.Errorf("Subscribe with a 256-byte queue name: %v, want kind %v naming 256 bytes", err, core.KindInvalid)
			}

			// Exchange: a 100-byte prefix and a 156-byte topic.
			bigPrefix := prefix + long("p", 78)
			b2 := openBus(t, url, Config{QueuePrefix: bigPrefix})
			// Its name is not recorded for cleanup: the client would cut
			// it to "", the default exchange.
			topic3 := long("v", 150) + randomHex(t)[:6]
			if err := b2.Publish(t.Context(), ports.Event{Topic: topic3, Key: "k"}); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("Publish with a 256-byte exchange name: %v, want kind %v", err, core.KindInvalid)
			}
			err = b2.Subscribe(t.Context(), topic3, func(context.Context, ports.Event) error { return nil })
			if !core.IsKind(err, core.KindInvalid) {
				t.Errorf("Subscribe with a 256-byte exchange name: %v, want kind %v", err, core.KindInvalid)
			}
			// The refused subscription's exchange name was fine on its
			// own; it was not declared either.
			if name == "amqp" && brokerHas(t, url, "exchange", prefix+topic2) {
				t.Errorf("exchange %s declared by a refused subscription", prefix+topic2)
			}
		})
	}
}

// brokerHas reports whether the broker holds a queue or exchange name,
// by a passive declare (which fails with 404 for a missing one).
func brokerHas(t *testing.T, url, kind, name string) bool {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if kind == "queue" {
		_, err = ch.QueueDeclarePassive(name, true, false, false, false, nil)
	} else {
		err = ch.ExchangeDeclarePassive(name, "fanout", true, false, false, false, nil)
	}
	var aerr *amqp.Error
	if errors.As(err, &aerr) && aerr.Code == amqp.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("passive declare of %s %s: %v", kind, name, err)
	}
	return true
}

// TestAMQPAckBeforeStopIsKept: an event whose handler succeeded just as
// its subscription stopped is not delivered again. The subscriber was
// closed right after the handler's Ack, and watermill-amqp, seeing both
// the Ack and the close, picked one at random and nacked the event back
// into the queue about half the time.
func TestAMQPAckBeforeStopIsKept(t *testing.T) {
	url := amqpURL(t)
	// The race is won or lost by scheduling: 40 rounds lost it at least
	// once in about half the runs before the fix.
	const rounds = 40
	for i := range rounds {
		prefix := "earshot-test." + randomHex(t) + "."
		topic := bustest.Topic(t)
		queue := queueName(prefix, topic, DefaultGroup)
		b, err := Open(url, Config{Logger: testLogger(t), QueuePrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteObjects(t, url, prefix+topic, queue) })
		ctx, cancel := context.WithCancel(t.Context())
		handled := make(chan struct{})
		err = b.Subscribe(ctx, topic, func(context.Context, ports.Event) error {
			// Done, and the service stops the subscription at once.
			cancel()
			close(handled)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "k"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-handled:
		case <-time.After(bustest.Wait):
			t.Fatal("event not delivered")
		}
		// Close waits for the subscription's end and closes the
		// connection, after which the broker holds no unacknowledged
		// delivery of it.
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if n := queueMessages(t, url, queue); n != 0 {
			t.Fatalf("round %d: %d events back in the queue after their handler succeeded, want 0", i, n)
		}
	}
}

// queueMessages is how many messages wait in queue, ready for a consumer.
func queueMessages(t *testing.T, url, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("queue %s: %v", queue, err)
	}
	return q.Messages
}
