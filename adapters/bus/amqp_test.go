package bus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// TestAMQPPublishesInFlightBounded: a broker that blocks publishers (a
// resource alarm: RabbitMQ stops reading from the publishing connection)
// never confirms, and every Publish abandoned at its ctx's end left a
// goroutine and a channel waiting for it, so they grew with the backlog up
// to the client's 2047 channels. Now at most maxInFlight wait; past them
// Publish fails when its ctx ends, saying why, and once the broker reads
// again the waiting ones finish and their goroutines end. The broker is
// the shared RabbitMQ, blocked for this test's connections only by a
// loopback proxy that stops passing on what the client sends.
func TestAMQPPublishesInFlightBounded(t *testing.T) {
	broker, err := url.Parse(amqpURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, broker.Host)
	viaProxy := *broker
	viaProxy.Host = p.addr()

	prefix := "earshot-test." + randomHex(t) + "."
	topic := bustest.Topic(t)
	t.Cleanup(func() { deleteObjects(t, broker.String(), prefix+topic, "") })
	b := openBus(t, viaProxy.String(), Config{QueuePrefix: prefix})
	// Connections up and the exchange declared before counting.
	if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "first"}); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	p.stall()
	const publishes = 100
	refused := 0
	for i := range publishes {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := b.Publish(ctx, ports.Event{Topic: topic, Key: fmt.Sprint(i)})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("publish %d with the broker blocked: %v, want its ctx's end", i, err)
		}
		if strings.Contains(err.Error(), "publishes already wait for the broker") {
			refused++
		}
	}
	grown := runtime.NumGoroutine() - before
	t.Logf("%d publishes abandoned: %d more goroutines, %d refused for want of room", publishes, grown, refused)
	// A little room over the bound for what the runtime and the client
	// start and end on their own.
	if grown > maxInFlight+4 {
		t.Errorf("%d abandoned publishes left %d more goroutines, want at most %d", publishes, grown, maxInFlight)
	}
	if want := publishes - maxInFlight; refused != want {
		t.Errorf("%d publishes refused for want of room, want %d", refused, want)
	}

	p.resume()
	p.waitUntil(t, bustest.Wait, func() bool { return runtime.NumGoroutine() <= before+2 }, func() string {
		return fmt.Sprintf("%d goroutines once the broker read again, want about %d", runtime.NumGoroutine(), before)
	})
	if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "after"}); err != nil {
		t.Fatalf("Publish once the broker read again: %v", err)
	}
}
