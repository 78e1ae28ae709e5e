package bus

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/bustest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestAMQPForeignHeaders: a message whose headers are not all strings
// (an x-death table the broker adds when it dead-letters a message, an
// x-delivery-count a quorum queue adds on redelivery, a number another
// publisher sets) was refused by watermill's marshaler before any
// handler saw it, and nacked back to the queue, over and over without
// a pause, for as long as it was there. It is delivered now, its
// string headers read as before.
func TestAMQPForeignHeaders(t *testing.T) {
	url := amqpURL(t)
	prefix := "earshot-test." + randomHex(t) + "."
	topic := bustest.Topic(t)
	t.Cleanup(func() { deleteObjects(t, url, prefix+topic, queueName(prefix, topic, DefaultGroup)) })
	b := openBus(t, url, Config{QueuePrefix: prefix})
	got := make(chan ports.Event, 4)
	if err := b.Subscribe(t.Context(), topic, func(_ context.Context, e ports.Event) error { got <- e; return nil }); err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	err = ch.PublishWithContext(t.Context(), prefix+topic, "", false, false, amqp.Publishing{
		Headers: amqp.Table{keyMetadata: "m_1", "x-delivery-count": int64(1), "x-death": []any{amqp.Table{"count": int64(1)}}},
		Body:    []byte(`{"matchId":"m_1"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.Key != "m_1" || string(e.Payload) != `{"matchId":"m_1"}` {
			t.Errorf("delivered %+v", e)
		}
	case <-time.After(bustest.Wait):
		t.Fatal("a message with headers other than strings was not delivered")
	}
}
