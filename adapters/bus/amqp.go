package bus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/earshothq/earshot/core"
)

// AMQP topology, per topic T (with the queue prefix) and consumer group G:
// a durable fanout exchange T, and a durable queue bound to it, T_G when
// neither name holds "_" (see queueName).
// Subscribers of one group consume one queue and so compete for its
// messages; every group has its own queue and so gets every message.
// Messages are persistent and the publisher waits for the broker's confirm,
// so an event taken by Publish survives a broker restart once it sits in a
// queue. A group's queue exists from its first subscription on: events
// published before any subscriber of a group ever existed are not kept for
// it, which the database-first design allows (sweeps find the work).
//
// Reconnection is watermill-amqp's: when the broker goes away, publishing
// fails at once with an error, the connection is redialled with backoff,
// and subscriptions resume on the new connection by themselves.
//
// watermill-amqp reads and writes its connection state without a lock
// (ThreeDotsLabs/watermill#693), so under the race detector any broker
// disconnection reports a data race inside that library. It is benign in
// practice (a pointer-sized field) and out of our reach; the reconnect test
// therefore runs without -race.

// Reconnect pacing: watermill-amqp's default grows to a minute, which
// would keep a service unready for up to a minute after the broker is back.
var reconnect = &wamqp.ReconnectConfig{
	BackoffInitialInterval:     500 * time.Millisecond,
	BackoffRandomizationFactor: 0.5,
	BackoffMultiplier:          1.5,
	BackoffMaxInterval:         10 * time.Second,
}

const (
	dialTimeout = 30 * time.Second
	heartbeat   = 10 * time.Second
	// closeTimeout bounds how long Close waits for in-flight publishes
	// (a broker that blocks publishers under a resource alarm never
	// confirms) before it drops the connections under them.
	closeTimeout = 10 * time.Second
	// maxInFlight bounds the publishes waiting for the broker, each a
	// goroutine and a channel: a broker that blocks publishers never
	// confirms, and publishes abandoned at their ctx's end would otherwise
	// pile up to the client's 2047 channels per connection.
	maxInFlight = 16
)

type amqpTransport struct {
	log watermill.LoggerAdapter
	cfg wamqp.Config // publisher config; subscribers copy it with their queue name

	// Publishing and consuming use separate connections, as RabbitMQ
	// advises: the broker throttles a publishing connection under load,
	// which must not stall acknowledgements on the consuming side.
	pubConn *wamqp.ConnectionWrapper
	subConn *wamqp.ConnectionWrapper
	pub     *wamqp.Publisher
	// inFlight holds a value per publish under way, abandoned or not.
	inFlight chan struct{}
	// closing ends publishes still waiting for room once close begins.
	closing chan struct{}
}

func newAMQP(rawURL string, u *url.URL, group string, log watermill.LoggerAdapter) (*amqpTransport, error) {
	if _, err := amqp.ParseURI(rawURL); err != nil {
		return nil, core.Errorf(core.KindInvalid, "bus URL %s: %v", u.Redacted(), err)
	}
	cfg := wamqp.NewDurablePubSubConfig(rawURL, wamqp.GenerateQueueNameTopicNameWithSuffix(group))
	cfg.Publish.ConfirmDelivery = true
	// ChannelPoolSize stays 0 (a channel per Publish call): the pooled
	// provider drops a channel from the pool when reopening it fails, so a
	// few failures during a broker restart would leave Publish waiting
	// forever for a channel.
	cfg.Connection.Reconnect = reconnect
	cfg.Marshaler = marshaler{}

	a := &amqpTransport{log: log, cfg: cfg, inFlight: make(chan struct{}, maxInFlight), closing: make(chan struct{})}
	var err error
	if a.pubConn, err = a.dial(u, "publish"); err != nil {
		return nil, err
	}
	if a.subConn, err = a.dial(u, "consume"); err != nil {
		_ = a.pubConn.Close()
		return nil, err
	}
	if a.pub, err = wamqp.NewPublisherWithConnection(cfg, log, a.pubConn); err != nil {
		_ = a.pubConn.Close()
		_ = a.subConn.Close()
		return nil, core.Wrap(core.KindInternal, err, "AMQP publisher")
	}
	return a, nil
}

func (a *amqpTransport) dial(u *url.URL, role string) (*wamqp.ConnectionWrapper, error) {
	cc := a.cfg.Connection
	cc.AmqpConfig = &amqp.Config{
		Heartbeat: heartbeat,
		Locale:    "en_US",
		Dial:      amqp.DefaultDial(dialTimeout),
		// The name shows in the RabbitMQ management UI.
		Properties: amqp.Table{"connection_name": "earshot " + role},
	}
	conn, err := wamqp.NewConnection(cc, a.log)
	if err != nil {
		return nil, core.Wrap(core.KindUnavailable, err, fmt.Sprintf("connect to AMQP broker %s", u.Redacted()))
	}
	return conn, nil
}

// publish waits for the broker's confirms but gives up when ctx ends:
// watermill-amqp honours ctx while writing, not while waiting for the
// confirm, which a blocked broker may never send. The abandoned publish
// finishes or fails in the background, holding its room among the
// maxInFlight until then; past them publish waits for room until ctx ends.
func (a *amqpTransport) publish(ctx context.Context, topic string, msgs []*message.Message) error {
	select {
	case a.inFlight <- struct{}{}:
	case <-a.closing:
		return errors.New("publish to " + topic + ": the bus is closing")
	case <-ctx.Done():
		return fmt.Errorf("publish to %s: %d publishes already wait for the broker (one that blocks publishers, say under a resource alarm, never confirms): %w",
			topic, maxInFlight, ctx.Err())
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-a.inFlight }()
		done <- a.pub.Publish(topic, msgs...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *amqpTransport) subscribe(ctx context.Context, topic, _, queue string) (<-chan *message.Message, func(), error) {
	cfg := a.cfg
	cfg.Queue.GenerateName = func(string) string { return queue }
	// A watermill subscriber per subscription, so that stopping one is
	// Close: it nacks what it holds, which ending its ctx alone does not
	// (a message being handed over would wait for a reader forever).
	sub, err := wamqp.NewSubscriberWithConnection(cfg, a.log, a.subConn)
	if err != nil {
		return nil, nil, err
	}
	// While the broker is away the watermill subscription waits for the
	// connection watching its ctx but not Close, so stop ends both. Only
	// stop does: a message's context derives from wctx and ends when its
	// Ack has been sent, which consume waits for after ctx has ended.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	msgs, err := sub.Subscribe(wctx, topic)
	if err != nil {
		cancel()
		_ = sub.Close()
		return nil, nil, err
	}
	stop := func() {
		cancel()
		if err := sub.Close(); err != nil {
			a.log.Error("Closing AMQP subscriber", err, watermill.LogFields{"topic": topic})
		}
	}
	return msgs, stop, nil
}

func (a *amqpTransport) ping(context.Context) error {
	for _, c := range []*wamqp.ConnectionWrapper{a.pubConn, a.subConn} {
		// IsConnected turns false only once the wrapper has handled the
		// close notification; IsClosed sees a dead socket at once.
		if !c.IsConnected() || c.Connection().IsClosed() {
			return errors.New("not connected to the AMQP broker")
		}
	}
	return nil
}

func (a *amqpTransport) close() error {
	// The publishes under way finish (or closeTimeout passes) before the
	// connection closes under them: the library reads its connection's
	// state in Publish and writes it on close without a lock
	// (ThreeDotsLabs/watermill#693), and those two must not overlap.
	// Past closeTimeout they wait for a broker that blocks publishers,
	// and the connection under them is dropped at once, as closeConn
	// would after waiting as long again.
	close(a.closing)
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	for range maxInFlight {
		select {
		case a.inFlight <- struct{}{}:
			continue
		case <-t.C:
			if conn := a.pubConn.Connection(); conn != nil {
				_ = conn.Close()
			}
		}
		break
	}
	if err := a.pub.Close(); err != nil {
		a.log.Error("Closing AMQP publisher", err, nil)
	}
	return errors.Join(closeConn(a.pubConn), closeConn(a.subConn))
}

// closeConn closes c, waiting at most closeTimeout for in-flight work
// before closing the AMQP connection under it, which fails that work.
func closeConn(c *wamqp.ConnectionWrapper) error {
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		if conn := c.Connection(); conn != nil {
			_ = conn.Close()
		}
		return <-done
	}
}

// marshaler is watermill's DefaultMarshaler reading a delivery whose
// headers are not all strings: the broker adds x-death (a table) to a
// message it dead-letters and a quorum queue x-delivery-count (a number)
// to one it redelivers, and another publisher may set anything. The
// default refuses such a message before any handler sees it and nacks it
// back to the queue, where it comes again at once, for as long as it is
// there. The bus reads only string headers (the key); the others are
// left out.
type marshaler struct{ wamqp.DefaultMarshaler }

func (m marshaler) Unmarshal(d amqp.Delivery) (*message.Message, error) {
	kept := make(amqp.Table, len(d.Headers))
	for k, v := range d.Headers {
		if _, ok := v.(string); ok {
			kept[k] = v
		}
	}
	d.Headers = kept
	return m.DefaultMarshaler.Unmarshal(d)
}
