package reddit

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Reddit's published budgets, in requests a minute.
const (
	anonymousPerMinute = 10
	oauthPerMinute     = 100
)

// pacer spaces requests to reddit. Every request books a slot at least gap
// after the previous one, so a cycle's reads are spread evenly instead of
// spending the minute's budget in a burst and being refused for the rest.
// When reddit says the budget is spent (X-Ratelimit-Remaining below 1) or
// asks for a pause (Retry-After), no slot is handed out before the time it
// named (X-Ratelimit-Reset seconds from the answer, or Retry-After).
//
// Slots are booked under a lock and waited for outside it, so concurrent
// reads queue up in order instead of all waking at once.
type pacer struct {
	gap time.Duration

	mu      sync.Mutex
	next    time.Time // no request starts before this
	blocked time.Time // reddit's budget is spent until this
}

func newPacer(perMinute int) *pacer {
	return &pacer{gap: time.Minute / time.Duration(perMinute)}
}

// reserve books the next slot and says how long to wait for it. When the
// wait would exceed limit nothing is booked and ok is false: the caller
// gives up on reddit for now rather than stall.
func (p *pacer) reserve(now time.Time, limit time.Duration) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := now
	if p.next.After(slot) {
		slot = p.next
	}
	if p.blocked.After(slot) {
		slot = p.blocked
	}
	wait = slot.Sub(now)
	if wait > limit {
		return wait, false
	}
	p.next = slot.Add(p.gap)
	return wait, true
}

// observe takes in the rate-limit headers of one of reddit's answers.
func (p *pacer) observe(now time.Time, h http.Header) {
	var until time.Time
	remaining, okRemaining := seconds(h.Get("X-Ratelimit-Remaining"))
	reset, okReset := seconds(h.Get("X-Ratelimit-Reset"))
	if okRemaining && okReset && remaining < 1 {
		until = now.Add(time.Duration(reset * float64(time.Second)))
	}
	if ra := retryAfter(now, h.Get("Retry-After")); ra.After(until) {
		until = ra
	}
	if until.IsZero() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.After(p.blocked) {
		p.blocked = until
	}
}

// seconds parses a header number ("0.0", "42"); reddit sends floats for
// the remaining budget and integers for the reset. Negative or absurd
// values (more than a day) are ignored rather than trusted.
func seconds(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 86400 {
		return 0, false
	}
	return f, true
}

// retryAfter reads Retry-After in either of its forms, seconds or an HTTP
// date; the zero time when absent or unreadable.
func retryAfter(now time.Time, v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	if s, ok := seconds(v); ok {
		return now.Add(time.Duration(s * float64(time.Second)))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) && t.Sub(now) <= 24*time.Hour {
		return t
	}
	return time.Time{}
}
