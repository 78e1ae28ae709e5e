package bus

import (
	"context"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// memory is the in-process transport on watermill's gochannel.
//
// gochannel gives every subscription every message and knows no consumer
// groups. To keep the AMQP semantics, each (topic, group) holds one
// gochannel subscription and all subscribers of the group read from its
// channel: a Go channel hands each value to one reader, which is exactly
// competing consumers. A nacked message is offered on the same channel
// again, so any subscriber of the group may retry it.
//
// gochannel's Persistent option is left off: it keeps every message ever
// published, for the life of the process.
type memory struct {
	gc *gochannel.GoChannel

	mu     sync.Mutex
	groups map[groupKey]*memGroup
}

type groupKey struct{ topic, group string }

type memGroup struct {
	msgs   <-chan *message.Message
	cancel context.CancelFunc // ends the gochannel subscription
	refs   int
}

func newMemory(log watermill.LoggerAdapter) *memory {
	return &memory{
		gc:     gochannel.NewGoChannel(gochannel.Config{}, log),
		groups: make(map[groupKey]*memGroup),
	}
}

func (m *memory) publish(_ context.Context, topic string, msgs []*message.Message) error {
	return m.gc.Publish(topic, msgs...)
}

func (m *memory) subscribe(_ context.Context, topic, group string) (<-chan *message.Message, func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := groupKey{topic, group}
	g := m.groups[k]
	if g == nil {
		// The group's subscription outlives any one subscriber, so it
		// gets its own context, ended when the last subscriber leaves.
		ctx, cancel := context.WithCancel(context.Background())
		msgs, err := m.gc.Subscribe(ctx, topic)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		g = &memGroup{msgs: msgs, cancel: cancel}
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
