package ports

import "context"

// Event is a message on the bus. Payload is small JSON naming a stored
// record; the database holds the truth, so a lost event delays work but
// never loses it (sweeps find the record again).
type Event struct {
	Topic   string
	Key     string // ordering or dedupe hint, e.g. a match id
	Payload []byte
}

// Publisher sends events.
type Publisher interface {
	// Publish sends events to their topics. It returns once the bus has
	// taken them (for AMQP, after the broker confirmed); an error means
	// some may not have been sent.
	Publish(ctx context.Context, events ...Event) error
}

// Handler handles one event. Returning nil acknowledges it; an error makes
// the bus deliver it again later.
type Handler func(ctx context.Context, e Event) error

// Subscriber delivers events of a topic to a handler.
type Subscriber interface {
	// Subscribe calls h for every event published to topic from now on,
	// until ctx ends. Handlers may run concurrently; with several
	// subscribers of one name (replicas), each event goes to one of them.
	Subscribe(ctx context.Context, topic string, h Handler) error
}
