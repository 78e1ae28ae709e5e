package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
)

// TestCloseWhilePublishing closes the bus under publishers that keep
// publishing and a subscriber that keeps handling: every Publish either
// takes its events or says the bus is unavailable, Close returns, and
// nothing panics or races.
func TestCloseWhilePublishing(t *testing.T) {
	for _, name := range []string{"memory", "amqp"} {
		t.Run(name, func(t *testing.T) {
			url, cfg := "memory://", Config{Logger: testLogger(t)}
			topic := bustest.Topic(t)
			if name == "amqp" {
				url = amqpURL(t)
				cfg.QueuePrefix = "earshot-test." + randomHex(t) + "."
				t.Cleanup(func() { deleteObjects(t, url, cfg.QueuePrefix+topic, queueName(cfg.QueuePrefix, topic, DefaultGroup)) })
			}
			b, err := Open(url, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var handled atomic.Int64
			if err := b.Subscribe(t.Context(), topic, func(context.Context, ports.Event) error { handled.Add(1); return nil }); err != nil {
				t.Fatal(err)
			}
			var published atomic.Int64
			started := make(chan struct{}, 4)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for i := 0; ; i++ {
						err := b.Publish(t.Context(), ports.Event{Topic: topic, Key: "k", Payload: []byte(`{}`)})
						if err != nil {
							if !core.IsKind(err, core.KindUnavailable) {
								t.Errorf("Publish while closing: %v, want kind %v", err, core.KindUnavailable)
							}
							return
						}
						if published.Add(1) == 50 || i == 0 {
							select {
							case started <- struct{}{}:
							default:
							}
						}
					}
				})
			}
			<-started
			for published.Load() < 50 {
				<-started
			}
			if err := b.Close(); err != nil {
				t.Errorf("Close while publishing: %v", err)
			}
			wg.Wait()
			t.Logf("%d published, %d handled", published.Load(), handled.Load())
		})
	}
}
