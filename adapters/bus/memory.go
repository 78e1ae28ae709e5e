package bus

import (
	"context"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// DefaultMemoryCapacity is how many events each consumer group of the
// in-process bus holds when Config.MemoryCapacity is 0.
const DefaultMemoryCapacity = 1024

// memory is the in-process transport on watermill's gochannel.
//
// gochannel gives every subscription every message and knows no consumer
// groups. To keep the AMQP semantics, each (topic, group) holds one
// gochannel subscription, on a gochannel topic of its own, and all
// subscribers of the group read from its channel: a Go channel hands each
// value to one reader, which is exactly competing consumers. A nacked
// message is offered on the same channel again, so any subscriber of the
// group may retry it.
//
// gochannel parks goroutines for every message until a subscriber
// acknowledges it, so a publisher faster than the consumers would grow
// memory without bound. Each group therefore holds at most capacity
// messages published and not yet acknowledged; past that, a message is
// dropped for that group and reported to dropped. The database is the
// truth: whoever consumes the topic finds the work again with a sweep.
//
// gochannel's Persistent option is left off: it keeps every message ever
// published, for the life of the process.
type memory struct {
	gc       *gochannel.GoChannel
	capacity int
	dropped  func(topic string, n int)

	mu     sync.Mutex
	groups map[groupKey]*memGroup
}

type groupKey struct{ topic, group string }

type memGroup struct {
	msgs   chan *message.Message // what the group's subscribers read
	cancel context.CancelFunc    // ends the gochannel subscription
	refs   int

	// slots holds one value per message taken and not yet acknowledged;
	// its capacity is the group's bound.
	slots chan struct{}
	// held names the messages whose slot is freed when their delivery
	// ends, so a redelivery after a nack does not free it twice.
	mu   sync.Mutex
	held map[string]bool
}

func newMemory(log watermill.LoggerAdapter, capacity int, dropped func(topic string, n int)) *memory {
	return &memory{
		gc:       gochannel.NewGoChannel(gochannel.Config{}, log),
		capacity: capacity,
		dropped:  dropped,
		groups:   make(map[groupKey]*memGroup),
	}
}

// gcTopic is the gochannel topic of one group; topics and groups never
// hold a slash.
func gcTopic(k groupKey) string { return k.group + "/" + k.topic }

func (m *memory) publish(_ context.Context, topic string, msgs []*message.Message) error {
	m.mu.Lock()
	var keys []groupKey
	var groups []*memGroup
	for k, g := range m.groups {
		if k.topic == topic {
			keys, groups = append(keys, k), append(groups, g)
		}
	}
	m.mu.Unlock()
	dropped := 0
	for i, g := range groups {
		// Past the group's bound, the rest of the batch is dropped for
		// this group.
		n := 0
		for n < len(msgs) && takeSlot(g.slots) {
			n++
		}
		dropped += len(msgs) - n
		take := msgs[:n]
		if len(take) == 0 {
			continue
		}
		// gochannel sends a copy of each message, so one message can
		// go to several groups.
		if err := m.gc.Publish(gcTopic(keys[i]), take...); err != nil {
			for range take {
				<-g.slots
			}
			return err
		}
	}
	if dropped > 0 && m.dropped != nil {
		m.dropped(topic, dropped)
	}
	return nil
}

func takeSlot(slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (m *memory) subscribe(_ context.Context, topic, group, _ string) (<-chan *message.Message, func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := groupKey{topic, group}
	g := m.groups[k]
	if g == nil {
		// The group's subscription outlives any one subscriber, so it
		// gets its own context, ended when the last subscriber leaves.
		ctx, cancel := context.WithCancel(context.Background())
		in, err := m.gc.Subscribe(ctx, gcTopic(k))
		if err != nil {
			cancel()
			return nil, nil, err
		}
		g = &memGroup{msgs: make(chan *message.Message), cancel: cancel,
			slots: make(chan struct{}, m.capacity), held: make(map[string]bool)}
		go g.forward(ctx, in)
		m.groups[k] = g
	}
	g.refs++
	stop := func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		g.refs--
		if g.refs == 0 {
			g.cancel()
			delete(m.groups, k)
		}
	}
	return g.msgs, stop, nil
}

// forward hands the gochannel subscription's messages to the group's
// subscribers, arranging for each message's slot to be freed when its
// delivery ends: gochannel ends the context of a message once it is
// acknowledged (or discarded on close), and not on a nack.
func (g *memGroup) forward(ctx context.Context, in <-chan *message.Message) {
	defer close(g.msgs)
	for msg := range in {
		id := msg.UUID
		g.mu.Lock()
		if !g.held[id] {
			g.held[id] = true
			context.AfterFunc(msg.Context(), func() {
				g.mu.Lock()
				delete(g.held, id)
				g.mu.Unlock()
				<-g.slots
			})
		}
		g.mu.Unlock()
		select {
		case g.msgs <- msg:
		case <-ctx.Done():
			// Closing: gochannel discards what it still holds.
			msg.Nack()
		}
	}
}

func (m *memory) ping(context.Context) error { return nil }

func (m *memory) close() error {
	m.mu.Lock()
	for k, g := range m.groups {
		g.cancel()
		delete(m.groups, k)
	}
	m.mu.Unlock()
	return m.gc.Close()
}
