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

// Memory is a fixed-window limiter in memory.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	windows map[string]*window
	swept   time.Time
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
		m.windows[key] = w
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

// sweep drops ended windows once a window length, so keys seen once do
// not stay forever.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.swept) < Window {
		return
	}
	m.swept = now
	for k, w := range m.windows {
		if now.Sub(w.start) >= Window {
			delete(m.windows, k)
		}
	}
}
