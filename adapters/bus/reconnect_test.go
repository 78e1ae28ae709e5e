//go:build !race

// watermill-amqp's connection state is unsynchronised
// (ThreeDotsLabs/watermill#693), so under -race a broker disconnection is
// reported as a data race inside that library; this test runs without it.

package bus

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// TestAMQPReconnect cuts the connections between the bus and the broker,
// as a broker restart does, without touching the broker itself (which
// other tests share): publishing fails while it is away, works again when
// it is back, and the subscription resumes on its own.
func TestAMQPReconnect(t *testing.T) {
	broker, err := url.Parse(amqpURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, broker.Host)
	viaProxy := *broker
	viaProxy.Host = p.addr()

	prefix := "earshot-test." + randomHex(t) + "."
	topic := bustest.Topic(t)
	t.Cleanup(func() {
		deleteObjects(t, broker.String(), prefix+topic, queueName(prefix, topic, DefaultGroup))
	})
	b := openBus(t, viaProxy.String(), Config{QueuePrefix: prefix})

	got := make(chan string, 10)
	err = b.Subscribe(t.Context(), topic, func(_ context.Context, e ports.Event) error {
		got <- e.Key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	publishOK(t, b, topic, "before")
	expectKey(t, got, "before")

	start := time.Now()
	p.cut()
	// The client learns of the cut from the closed socket at once.
	var pubErr error
	p.waitUntil(t, 5*time.Second, func() bool {
		pubErr = b.Publish(t.Context(), ports.Event{Topic: topic, Key: "during"})
		return pubErr != nil
	}, func() string { return "Publish kept succeeding with the broker away" })
	if !core.IsKind(pubErr, core.KindUnavailable) {
		t.Fatalf("Publish while the broker is away: %v, want kind %v", pubErr, core.KindUnavailable)
	}
	if err := b.Ping(t.Context()); !core.IsKind(err, core.KindUnavailable) {
		t.Errorf("Ping with the broker away: %v, want kind %v", err, core.KindUnavailable)
	}
	t.Logf("publish failed %v after the cut", time.Since(start).Round(time.Millisecond))

	// A few reconnect attempts fail meanwhile.
	p.waitUntil(t, bustest.Wait, func() bool { return p.refusedCount() >= 2 }, func() string {
		return fmt.Sprintf("%d reconnect attempts while the broker was away, want 2", p.refusedCount())
	})
	p.restore()
	back := time.Now()
	p.waitUntil(t, bustest.Wait, func() bool { return b.Ping(t.Context()) == nil }, func() string { return "bus did not reconnect" })
	t.Logf("reconnected %v after the broker came back", time.Since(back).Round(time.Millisecond))

	publishOK(t, b, topic, "after")
	// "during" may or may not have reached the broker before the cut was
	// noticed; "after" must arrive through the resumed subscription.
	expectKey(t, got, "after")
	t.Logf("subscription resumed %v after the broker came back", time.Since(back).Round(time.Millisecond))
}

func publishOK(t *testing.T, b *Bus, topic, key string) {
	t.Helper()
	if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: key, Payload: []byte(`{}`)}); err != nil {
		t.Fatalf("Publish %s: %v", key, err)
	}
}

func expectKey(t *testing.T, got <-chan string, key string) {
	t.Helper()
	timeout := time.After(bustest.Wait)
	for {
		select {
		case k := <-got:
			if k == key {
				return
			}
		case <-timeout:
			t.Fatalf("event %s not delivered", key)
		}
	}
}
