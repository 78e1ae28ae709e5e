package proxytest

import (
	"net"
	"slices"
	"sync"
)

// maxAsks is how many asks a proxy records; a test asks for a handful,
// and a client gone wrong must not grow the record without end.
const maxAsks = 1024

// record is what both proxies keep: the asks seen (the first maxAsks), a
// wake after each, and the connections open, which are closed at the
// end rather than waited for, since a browser keeps its own open.
type record[T any] struct {
	mu   sync.Mutex
	asks []T
	open map[net.Conn]bool
	wg   sync.WaitGroup
	wake chan struct{}
}

func (r *record[T]) init() {
	r.open = map[net.Conn]bool{}
	r.wake = make(chan struct{}, 1)
}

// Wake has a value after each ask, for a test that waits on them.
func (r *record[T]) Wake() <-chan struct{} { return r.wake }

func (r *record[T]) ask(v T) {
	r.mu.Lock()
	if len(r.asks) < maxAsks {
		r.asks = append(r.asks, v)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *record[T]) seen() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asks)
}

// hold counts c as open until let; serve it in a goroutine of its own.
func (r *record[T]) hold(c net.Conn) {
	r.mu.Lock()
	r.open[c] = true
	r.mu.Unlock()
	r.wg.Add(1)
}

func (r *record[T]) let(c net.Conn) {
	r.mu.Lock()
	delete(r.open, c)
	r.mu.Unlock()
	r.wg.Done()
}

// closeAll closes what is open and waits for its goroutines.
func (r *record[T]) closeAll() {
	r.mu.Lock()
	for c := range r.open {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
