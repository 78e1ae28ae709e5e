package bus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// TestPoisonEventGivenUp: an event whose handler fails every time was
// nacked back without end, every 5 s once the pause had grown, on both
// backends (on memory:// it also held a slot of the group's bound for
// good). After Config.MaxAttempts tries it is acknowledged, logged and
// reported to Dropped; the events behind it are handled, and it is not
// handed over again.
func TestPoisonEventGivenUp(t *testing.T) {
	for _, name := range []string{"memory", "amqp"} {
		t.Run(name, func(t *testing.T) {
			const attempts = 3
			topic := bustest.Topic(t)
			var mu sync.Mutex
			dropped := map[string]int{}
			gaveUp := make(chan struct{}, 1)
			url, cfg := "memory://", Config{MaxAttempts: attempts, Dropped: func(topic string, n int) {
				mu.Lock()
				dropped[topic] += n
				mu.Unlock()
				select {
				case gaveUp <- struct{}{}:
				default:
				}
			}}
			var queue string
			if name == "amqp" {
				url = amqpURL(t)
				cfg.QueuePrefix = "earshot-test." + randomHex(t) + "."
				queue = queueName(cfg.QueuePrefix, topic, DefaultGroup)
				t.Cleanup(func() { deleteObjects(t, url, cfg.QueuePrefix+topic, queue) })
			}
			b := openBus(t, url, cfg)
			tries := 0
			again := make(chan int, 1)
			good := make(chan struct{}, 1)
			err := b.Subscribe(t.Context(), topic, func(_ context.Context, e ports.Event) error {
				if e.Key == "good" {
					good <- struct{}{}
					return nil
				}
				mu.Lock()
				tries++
				n := tries
				mu.Unlock()
				if n > attempts {
					select {
					case again <- n:
					default:
					}
				}
				return errors.New("this event can never be handled")
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "poison", Payload: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-gaveUp:
			case n := <-again:
				t.Fatalf("the failing event was handed over %d times, want %d and then given up", n, attempts)
			case <-time.After(bustest.Wait):
				t.Fatal("the failing event was neither given up nor handed over again")
			}
			mu.Lock()
			if tries != attempts || dropped[topic] != 1 || len(dropped) != 1 {
				t.Errorf("%d tries, dropped %v; want %d tries and 1 dropped on %s", tries, dropped, attempts, topic)
			}
			mu.Unlock()

			// The next event is handled, and the given-up one comes no more:
			// it would have come first.
			if err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "good", Payload: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-good:
			case n := <-again:
				t.Fatalf("the given-up event was handed over again (try %d)", n)
			case <-time.After(bustest.Wait):
				t.Fatal("the event after the given-up one was not handled")
			}
			if name == "amqp" {
				// Close waits for the last Ack; nothing is left in the queue.
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				if n := queueMessages(t, url, queue); n != 0 {
					t.Errorf("%d messages left in the queue, want 0", n)
				}
			}
		})
	}
}

// TestTriesBounded: the failed tries of at most limit messages are
// counted; the one tried least recently makes room.
func TestTriesBounded(t *testing.T) {
	tr := newTries(2)
	tr.add("a")
	tr.add("b")
	if n := tr.add("a"); n != 2 {
		t.Fatalf("a: %d tries, want 2", n)
	}
	tr.add("c") // b was tried least recently
	if len(tr.m) != 2 {
		t.Fatalf("%d messages counted, want 2", len(tr.m))
	}
	if n := tr.add("a"); n != 3 {
		t.Errorf("a: %d tries, want 3", n)
	}
	if n := tr.add("b"); n != 1 {
		t.Errorf("b, forgotten: %d tries, want 1", n)
	}
	tr.forget("b")
	if _, ok := tr.m["b"]; ok {
		t.Error("b still counted after forget")
	}
}
