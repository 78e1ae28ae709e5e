// Package ratelimit counts requests per key in one process's memory, for
// a single replica. Several replicas share a limiter kept in the database
// instead.
package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/earshothq/earshot/ports"
)

// Window is the length of a counting window.
const Window = time.Minute

// maxKeys bounds the windows held at once. Keys come from callers (the
// address of every request with a bad key is one), so without a bound
// callers from many addresses (an IPv6 /48 holds 65,536 /64s) would
// grow the map by one entry a request for a whole window. At some
// 150 bytes an entry the bound is about 15 MB, and a single replica
// seldom sees that many distinct callers a minute. Past it the oldest
// window is forgotten: that key's count starts again, which only a
// caller sending from maxKeys other keys within a window can cause.
const maxKeys = 100_000

// Memory is a fixed-window limiter in memory.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	windows map[string]*window
	// order holds the windows from order[head] on, oldest first, so the
	// ended and the oldest are dropped without a scan of windows. An
	// entry whose key now has another window is stale and skipped.
	order []held
	head  int
}

type held struct {
	key string
	w   *window
}

type window struct {
	start time.Time
	count int
}

var _ ports.RateLimiter = (*Memory)(nil)

// NewMemory returns a limiter reading time from now (time.Now when nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, windows: map[string]*window{}}
}

// Take implements ports.RateLimiter.
func (m *Memory) Take(_ context.Context, key string, limit int) (ports.Quota, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	w := m.windows[key]
	if w == nil || now.Sub(w.start) >= Window {
		w = &window{start: now}
		m.add(key, w)
	}
	q := ports.Quota{Limit: limit, Reset: w.start.Add(Window).Sub(now)}
	if w.count >= limit {
		return q, nil
	}
	w.count++
	q.Allowed, q.Remaining = true, limit-w.count
	return q, nil
}

// Peek implements ports.RateLimiter.
func (m *Memory) Peek(_ context.Context, key string, limit int) (ports.Quota, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.windows[key]
	if w == nil || now.Sub(w.start) >= Window {
		return ports.Quota{Allowed: limit > 0, Limit: limit, Remaining: max(limit, 0), Reset: Window}, nil
	}
	q := ports.Quota{Limit: limit, Reset: w.start.Add(Window).Sub(now)}
	if w.count < limit {
		q.Allowed, q.Remaining = true, limit-w.count
	}
	return q, nil
}

// sweep drops the ended windows, oldest first, so keys seen once do not
// stay forever.
func (m *Memory) sweep(now time.Time) {
	for m.head < len(m.order) && now.Sub(m.order[m.head].w.start) >= Window {
		m.dropOldest()
	}
}

// add holds w as key's window, first dropping the oldest while maxKeys
// are held. The order is bounded too: a clock moved back can leave stale
// entries behind a window that has not ended.
func (m *Memory) add(key string, w *window) {
	for m.head < len(m.order) && (len(m.windows) >= maxKeys || len(m.order)-m.head >= 2*maxKeys) {
		m.dropOldest()
	}
	m.windows[key] = w
	m.order = append(m.order, held{key, w})
}

// dropOldest forgets the oldest entry of order and its window, unless the
// key has a newer one, and gives back the room the dropped entries held.
func (m *Memory) dropOldest() {
	h := m.order[m.head]
	m.order[m.head] = held{}
	m.head++
	if m.windows[h.key] == h.w {
		delete(m.windows, h.key)
	}
	if m.head >= len(m.order)/2 {
		m.order = append(m.order[:0], m.order[m.head:]...)
		m.head = 0
	}
}
