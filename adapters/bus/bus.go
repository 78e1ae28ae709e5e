// Package bus is the event bus on watermill: an in-process bus for a
// single replica (memory://) and RabbitMQ for several (amqp://).
//
// Both backends keep the same semantics, so the application can be tested
// on the first and run on the second: every consumer group gets every
// event of a topic, subscribers in one group share the work, a handler
// error means the event comes back after a growing pause (until it has
// failed Config.MaxAttempts times and is given up), and delivery is at
// least once and unordered. The database is the truth; the bus only
// makes work start sooner, which is why nothing here tries to be exactly
// once.
package bus

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Config tunes a Bus. The zero value works.
type Config struct {
	// Logger receives the bus's logs; nil means slog.Default().
	Logger *slog.Logger
	// Group is the consumer group of Subscribe: replicas with one Group
	// share the work, each event handled once by one of them. Empty means
	// DefaultGroup.
	Group string
	// QueuePrefix is prepended to every topic, hence to AMQP exchange and
	// queue names, so that tests and deployments sharing a broker never see
	// each other's messages. Nothing is put between the two, as names have
	// always been: prefix "ab" with topic "c" and prefix "a" with topic
	// "bc" name one exchange. Deployments that publish the same topics
	// never meet that way, whatever their prefixes; one whose topics
	// differ from another's should end its prefix with a separator (say
	// "prod."). Adding one here would move every existing deployment's
	// durable queues.
	QueuePrefix string
	// MemoryCapacity bounds the in-process bus: how many events each
	// consumer group holds, published and not yet acknowledged; 0 means
	// DefaultMemoryCapacity. Past it, Publish drops events for the full
	// group (and still returns nil: the database is the truth) and
	// reports them to Dropped. RabbitMQ keeps its queues on its own and
	// drops nothing.
	MemoryCapacity int
	// Dropped is told how many events of topic (without the prefix) the
	// in-process bus dropped for a full group, and of each event given up
	// after MaxAttempts failed tries (on either backend); nil ignores
	// drops. It is called from Publish and from the subscriptions, so it
	// must be quick: count, and wake whoever sweeps the database for the
	// work the events announced.
	Dropped func(topic string, n int)
	// MaxAttempts is how many times the bus hands one event to the
	// handlers of a subscription that keep failing on it before it gives
	// the event up: acknowledges it, logs it and reports it to Dropped.
	// 0 means DefaultMaxAttempts. Without a bound an event no handler
	// can take would come back every few seconds for as long as the
	// queue lasts; the database holds the work it announced, and the
	// sweeps find that work.
	MaxAttempts int
}

// DefaultMaxAttempts is how many times an event is handed to a failing
// handler when Config.MaxAttempts is 0: with the pauses between tries,
// about 20 seconds of failures.
const DefaultMaxAttempts = 10

// DefaultGroup is the consumer group when Config.Group is empty.
const DefaultGroup = "earshot"

// Retry pauses after a handler error: the first failure waits retryMin,
// each further consecutive failure of the subscription doubles it up to
// retryMax. Without a pause a failing handler (say, the database is down)
// would spin on the same event as fast as the broker redelivers it.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// ackWait bounds how long a stopping subscription waits for the transport
// to pass on its last Ack (a write to the broker's socket, normally
// immediate).
const ackWait = 5 * time.Second

// keyMetadata carries Event.Key in the watermill metadata (an AMQP header).
const keyMetadata = "event_key"

// topicPattern is what AMQP accepts in exchange and queue names; memory://
// checks it too so that a topic working in tests works in production.
var topicPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`)

// maxName bounds AMQP exchange and queue names (a short string). The AMQP
// client does not refuse a longer name: it sends its length modulo 256 and
// that many bytes, so the name would quietly become another, shorter one.
// memory:// checks it too, as it does topicPattern.
const maxName = 255

// queueName is the AMQP queue of group on topic, both without the prefix.
//
// Names without "_" keep the form earshot has always used,
// <prefix><topic>_<group>, so the queues of a running deployment stay
// where they are on upgrade. That form is ambiguous once either name holds
// "_" (topic a_b in group c and topic a in group b_c would share a queue),
// so then each "_" of topic and group is doubled and the two are joined by
// "_:". Read left to right after the prefix, such a name splits one way
// only, and it holds at least three "_" where the plain form holds one.
func queueName(prefix, topic, group string) string {
	if !strings.Contains(topic, "_") && !strings.Contains(group, "_") {
		return prefix + topic + "_" + group
	}
	return prefix + strings.ReplaceAll(topic, "_", "__") + "_:" + strings.ReplaceAll(group, "_", "__")
}

// checkNames refuses a topic (and group, when not empty) whose AMQP
// exchange or queue name would pass maxName.
func (b *Bus) checkNames(topic, group string) error {
	if n := len(b.cfg.QueuePrefix + topic); n > maxName {
		return core.Errorf(core.KindInvalid, "topic %q: with the queue prefix the exchange name is %d bytes, over AMQP's %d", topic, n, maxName)
	}
	if group == "" {
		return nil
	}
	if n := len(queueName(b.cfg.QueuePrefix, topic, group)); n > maxName {
		return core.Errorf(core.KindInvalid, "topic %q in group %q: with the queue prefix the queue name is %d bytes, over AMQP's %d; use shorter names", topic, group, n, maxName)
	}
	return nil
}

// transport is what a backend provides; Bus adds validation, the handler
// loop, retries and lifecycle on top.
type transport interface {
	// publish sends msgs to topic (already prefixed).
	publish(ctx context.Context, topic string, msgs []*message.Message) error
	// subscribe starts consuming topic for group, whose queue (for a
	// broker) is named queue. The channel closes when the transport stops;
	// stop releases the consumer (nacking what it holds) and is called
	// exactly once, after the last read.
	subscribe(ctx context.Context, topic, group, queue string) (msgs <-chan *message.Message, stop func(), err error)
	ping(ctx context.Context) error
	close() error
}

// Bus publishes and delivers events. Create it with Open; it is safe for
// concurrent use.
type Bus struct {
	cfg Config
	log *slog.Logger
	tr  transport

	// root ends every subscription when the bus closes.
	root   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

var (
	_ ports.Publisher  = (*Bus)(nil)
	_ ports.Subscriber = (*Bus)(nil)
	_ ports.Subscriber = (*Group)(nil)
)

// Open connects to the bus at rawURL: "memory://" for an in-process bus
// (events never leave the process and are lost when it stops; each group
// holds at most Config.MemoryCapacity of them) or
// "amqp://user:pass@host:5672/vhost" (also amqps://) for RabbitMQ.
// KindInvalid for an unsupported or malformed URL; KindUnavailable when the
// broker cannot be reached. Errors never contain the password.
func Open(rawURL string, cfg Config) (*Bus, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Group == "" {
		cfg.Group = DefaultGroup
	}
	if cfg.MaxAttempts < 0 {
		return nil, core.Errorf(core.KindInvalid, "bus max attempts must not be negative")
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if !topicPattern.MatchString(cfg.Group) {
		return nil, core.Errorf(core.KindInvalid, "bus group %q: use letters, digits and . _ : -", cfg.Group)
	}
	if cfg.QueuePrefix != "" && !topicPattern.MatchString(cfg.QueuePrefix) {
		return nil, core.Errorf(core.KindInvalid, "bus queue prefix %q: use letters, digits and . _ : -", cfg.QueuePrefix)
	}
	log := cfg.Logger.With("component", "bus")
	wlog := watermillLogger(log)

	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse quotes the whole input, password included.
		return nil, core.Errorf(core.KindInvalid, "bus URL is malformed")
	}
	var tr transport
	switch u.Scheme {
	case "memory":
		if cfg.MemoryCapacity < 0 {
			return nil, core.Errorf(core.KindInvalid, "bus memory capacity must not be negative")
		}
		if cfg.MemoryCapacity == 0 {
			cfg.MemoryCapacity = DefaultMemoryCapacity
		}
		dropped := func(topic string, n int) {
			if cfg.Dropped != nil {
				cfg.Dropped(strings.TrimPrefix(topic, cfg.QueuePrefix), n)
			}
		}
		tr = newMemory(wlog, cfg.MemoryCapacity, dropped)
	case "amqp", "amqps":
		tr, err = newAMQP(rawURL, u, cfg.Group, wlog)
		if err != nil {
			return nil, err
		}
	default:
		return nil, core.Errorf(core.KindInvalid, "bus URL %s: scheme must be memory or amqp", u.Redacted())
	}

	root, cancel := context.WithCancel(context.Background())
	return &Bus{cfg: cfg, log: log, tr: tr, root: root, cancel: cancel}, nil
}

// watermillLogger maps watermill's levels one step down: its Info lines
// are per subscription or per message ("no subscribers to send message"),
// which belong to debugging, while its errors (lost connection, failed
// reconnect) stay errors.
func watermillLogger(log *slog.Logger) watermill.LoggerAdapter {
	return plainErrors{watermill.NewSlogLoggerWithLevelMapping(log, map[slog.Level]slog.Level{
		slog.LevelInfo:  slog.LevelDebug,
		slog.LevelDebug: watermill.LevelTrace,
	})}
}

// plainErrors logs errors by their message. watermill-amqp wraps errors
// with github.com/pkg/errors, and slog formats values with %+v, which would
// print a stack trace into every reconnect attempt's log line.
type plainErrors struct{ watermill.LoggerAdapter }

func (l plainErrors) Error(msg string, err error, fields watermill.LogFields) {
	if err != nil {
		err = errors.New(err.Error())
	}
	l.LoggerAdapter.Error(msg, err, fields)
}

func (l plainErrors) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return plainErrors{l.LoggerAdapter.With(fields)}
}

// Publish sends events to their topics; see ports.Publisher. Events of one
// topic in one call go to the broker together, in order, each confirmed.
func (b *Bus) Publish(ctx context.Context, events ...ports.Event) error {
	if len(events) == 0 {
		return nil
	}
	if b.isClosed() {
		return core.Errorf(core.KindUnavailable, "bus is closed")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var topics []string
	byTopic := make(map[string][]*message.Message)
	for _, e := range events {
		if !topicPattern.MatchString(e.Topic) {
			return core.Errorf(core.KindInvalid, "event topic %q: use 1 to 200 letters, digits and . _ : -", e.Topic)
		}
		if err := b.checkNames(e.Topic, ""); err != nil {
			return err
		}
		msg := message.NewMessage(watermill.NewUUID(), e.Payload)
		if e.Key != "" {
			msg.Metadata.Set(keyMetadata, e.Key)
		}
		msg.SetContext(ctx)
		if _, ok := byTopic[e.Topic]; !ok {
			topics = append(topics, e.Topic)
		}
		byTopic[e.Topic] = append(byTopic[e.Topic], msg)
	}
	for _, topic := range topics {
		if err := b.tr.publish(ctx, b.cfg.QueuePrefix+topic, byTopic[topic]); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return err
			}
			return core.Wrap(core.KindUnavailable, err, "publish to "+topic)
		}
	}
	return nil
}

// Subscribe delivers events of topic to h in the group of Config.Group;
// see ports.Subscriber.
func (b *Bus) Subscribe(ctx context.Context, topic string, h ports.Handler) error {
	return b.subscribe(ctx, topic, b.cfg.Group, h)
}

// Group returns a subscriber in consumer group name on this bus's
// connection. Two services of one process that both need every event of a
// topic subscribe through two groups; subscribing both through Subscribe
// would make them share (split) the events.
func (b *Bus) Group(name string) *Group {
	return &Group{bus: b, name: name}
}

// Group is a consumer group on a Bus; see Bus.Group.
type Group struct {
	bus  *Bus
	name string
}

// Subscribe delivers events of topic to h in this group; see
// ports.Subscriber.
func (g *Group) Subscribe(ctx context.Context, topic string, h ports.Handler) error {
	return g.bus.subscribe(ctx, topic, g.name, h)
}

func (b *Bus) subscribe(ctx context.Context, topic, group string, h ports.Handler) error {
	if !topicPattern.MatchString(topic) {
		return core.Errorf(core.KindInvalid, "topic %q: use 1 to 200 letters, digits and . _ : -", topic)
	}
	if !topicPattern.MatchString(group) {
		return core.Errorf(core.KindInvalid, "group %q: use letters, digits and . _ : -", group)
	}
	if err := b.checkNames(topic, group); err != nil {
		return err
	}
	if h == nil {
		return core.Errorf(core.KindInvalid, "nil handler")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Registering under the lock orders Subscribe against Close: either
	// Close waits for this subscription or Subscribe sees the bus closed.
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return core.Errorf(core.KindUnavailable, "bus is closed")
	}
	b.handlers.Add(1)
	b.mu.Unlock()

	// The subscription ends with the caller's ctx or with the bus.
	sctx, cancel := context.WithCancel(ctx)
	unlink := context.AfterFunc(b.root, cancel)
	msgs, stop, err := b.tr.subscribe(sctx, b.cfg.QueuePrefix+topic, group, queueName(b.cfg.QueuePrefix, topic, group))
	if err != nil {
		unlink()
		cancel()
		b.handlers.Done()
		return core.Wrap(core.KindUnavailable, err, "subscribe to "+topic)
	}
	go func() {
		defer b.handlers.Done()
		defer cancel()
		defer unlink()
		defer stop()
		b.consume(sctx, topic, group, msgs, h)
	}()
	return nil
}

// consume runs h on each message until ctx ends or msgs closes.
func (b *Bus) consume(ctx context.Context, topic, group string, msgs <-chan *message.Message, h ports.Handler) {
	log := b.log.With("topic", topic, "group", group)
	failures := 0
	tries := newTries(max(DefaultMemoryCapacity, b.cfg.MemoryCapacity))
	// The transport sends an Ack to the broker after consume has moved on;
	// stopping the transport before then (the caller's next step) could
	// turn a handled event into a redelivered one. A message's context
	// ends once the transport has dealt with its Ack, so the last one
	// acknowledged is waited for, briefly, before returning.
	var acked *message.Message
	defer func() {
		if acked == nil {
			return
		}
		t := time.NewTimer(ackWait)
		defer t.Stop()
		select {
		case <-acked.Context().Done():
		case <-t.C:
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-msgs:
			if !ok {
				return
			}
			// Both cases may be ready at once and select picks at random;
			// once ctx has ended no handler may start.
			if ctx.Err() != nil {
				msg.Nack()
				return
			}
			e := ports.Event{Topic: topic, Key: msg.Metadata.Get(keyMetadata), Payload: msg.Payload}
			err := callHandler(ctx, log, h, e)
			id := msgID(msg)
			if err == nil {
				failures = 0
				tries.forget(id)
				msg.Ack()
				acked = msg
				continue
			}
			if ctx.Err() != nil {
				// Stopping: the handler most likely failed because its ctx
				// ended; the event goes back for whoever runs next.
				log.Debug("event returned on stop", "key", e.Key, "error", err)
				msg.Nack()
				return
			}
			failures++
			if n := tries.add(id); n >= b.cfg.MaxAttempts {
				tries.forget(id)
				log.Error("event handler failed on every try; the event is given up (the database holds its work, which the sweeps find)",
					"key", e.Key, "tries", n, "error", err)
				if b.cfg.Dropped != nil {
					b.cfg.Dropped(topic, 1)
				}
				msg.Ack()
				acked = msg
				continue
			}
			wait := retryDelay(failures)
			log.Warn("event handler failed; the event will be delivered again",
				"key", e.Key, "consecutive_failures", failures, "retry_in", wait, "error", err)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			msg.Nack()
		}
	}
}

// callHandler runs h, turning a panic into an error so one bad event cannot
// take the process down; the event is then retried like any failure.
func callHandler(ctx context.Context, log *slog.Logger, h ports.Handler, e ports.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("event handler panicked", "key", e.Key, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return h(ctx, e)
}

// msgID names a message across its redeliveries: by the UUID the bus's
// publisher gives it, or for a message from another publisher, which may
// have none, by its key and payload.
func msgID(msg *message.Message) string {
	if msg.UUID != "" {
		return msg.UUID
	}
	h := fnv.New128a()
	_, _ = h.Write([]byte(msg.Metadata.Get(keyMetadata)))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(msg.Payload)
	return string(h.Sum(nil))
}

// tries counts a subscription's failed tries of each message until the
// message is handled or given up. The broker does not count them: a
// classic queue only flags a message redelivered. At most limit messages
// are counted; past it the one tried least recently is forgotten (most
// likely handled by another subscriber since), and would start its count
// again. With limit at least the memory bound, every message of a group
// of the in-process bus can be counted at once; a broker hands a
// subscription one message at a time (prefetch 1), and a nacked message
// goes back to where it was in the queue, so only a few take turns.
type tries struct {
	limit int
	clock uint64
	m     map[string]try
}

type try struct {
	n    int
	last uint64
}

func newTries(limit int) *tries { return &tries{limit: limit, m: make(map[string]try)} }

// add counts a failed try of id and returns how many it has had.
func (t *tries) add(id string) int {
	t.clock++
	c, ok := t.m[id]
	if !ok && len(t.m) >= t.limit {
		oldest, at := "", uint64(0)
		for k, v := range t.m {
			if oldest == "" || v.last < at {
				oldest, at = k, v.last
			}
		}
		delete(t.m, oldest)
	}
	c.n++
	c.last = t.clock
	t.m[id] = c
	return c.n
}

func (t *tries) forget(id string) { delete(t.m, id) }

func retryDelay(failures int) time.Duration {
	d := retryMin
	for i := 1; i < failures && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// Ping reports whether the bus can carry events: for AMQP, whether the
// connections to the broker are up (they come back by themselves after a
// broker restart). KindUnavailable otherwise. It is meant for a readiness
// check and does not block.
func (b *Bus) Ping(ctx context.Context) error {
	if b.isClosed() {
		return core.Errorf(core.KindUnavailable, "bus is closed")
	}
	if err := b.tr.ping(ctx); err != nil {
		return core.Wrap(core.KindUnavailable, err, "bus unavailable")
	}
	return nil
}

// Close stops every subscription, waits for running handlers to return
// (their ctx ends first) and disconnects. Events a handler had not
// acknowledged go back to the broker. Close is idempotent; later calls
// return the first result.
func (b *Bus) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		b.cancel()
		b.handlers.Wait()
		b.closeErr = b.tr.close()
	})
	return b.closeErr
}

func (b *Bus) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}
