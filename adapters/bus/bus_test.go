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
	s.names.add(s.prefix+topic, s.prefix+topic+"_"+s.group)
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
				deleteObjects(t, url, b.cfg.QueuePrefix+topic, b.cfg.QueuePrefix+topic+"_"+DefaultGroup)
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
