package ports

import "context"

// Event is a message on the bus. Payload is small JSON naming a stored
// record; the database holds the truth, so a lost event delays work but
// never loses it (sweeps find the record again).
type Event struct {
	Topic   string // letters, digits and . _ : - (it names broker objects)
	Key     string // ordering or dedupe hint, e.g. a match id
	Payload []byte
}

// Publisher sends events. It is safe for concurrent use.
type Publisher interface {
	// Publish sends events to their topics. It returns once the bus has
	// taken them (for AMQP, after the broker confirmed); an error means
	// some may not have been sent. Publishing to a topic nobody listens
	// to is not an error, and neither is an event a bounded in-process
	// bus drops because its consumers are that far behind (it reports the
	// drop instead; the database holds the work). KindInvalid for an
	// event without a valid topic; KindUnavailable when the bus is closed
	// or the broker cannot be reached; the ctx error when ctx ends first.
	Publish(ctx context.Context, events ...Event) error
}

// Handler handles one event. Returning nil acknowledges it; an error makes
// the bus deliver it again later, after a pause that grows while the
// handler keeps failing, until the bus gives it up (the adapter bounds the
// tries; the database holds the work). Delivery is at least once and unordered, so a
// handler must tolerate duplicates (the database decides whether the work
// is still to do). A payload that can never be handled should be logged
// and acknowledged, not returned as an error.
type Handler func(ctx context.Context, e Event) error

// Subscriber delivers events of a topic to a handler.
type Subscriber interface {
	// Subscribe starts calling h for every event published to topic from
	// the moment it returns, until ctx ends or the bus closes; it does not
	// block. Each call handles one event at a time; subscribe several
	// times for parallel handling. Subscribers share a consumer group
	// (replicas of one service): each event goes to one of them, while
	// every group gets every event. The ctx passed to h ends when the
	// subscription stops. KindInvalid for an invalid topic; KindUnavailable
	// when the bus is closed or the broker cannot be reached.
	Subscribe(ctx context.Context, topic string, h Handler) error
}
