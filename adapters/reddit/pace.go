package reddit

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Reddit's published budgets, in requests a minute. The keyless one is
// Config.KeylessPerMinute; reddit throttles some addresses further, which
// its headers and 429s tell.
const (
	DefaultKeylessPerMinute = 10
	oauthPerMinute          = 100
)

// slowestGap is the longest gap a pacer slows to after 429s that named no
// time: one request a minute, the least reddit is reported to allow.
const slowestGap = time.Minute

// quietStretch is how long a slowed pacer goes without a 429 before it
// undoes one halving of the budget. A 429 that names no time may be a
// passing throttle, so the budget must come back by itself; but reddit is
// reported to hold some addresses to one request a minute for good, and
// there a step back costs at most one 429 a stretch, which the rest after
// it absorbs. An hour, as the default rest of a refused way
// (DefaultRefusedRest): a single passing 429 costs an hour at half the
// budget; from one a minute back takes four quiet hours keyless, seven
// with OAuth.
const quietStretch = time.Hour

// pacer spaces requests to reddit. Every request books a slot at least gap
// after the previous one, so a cycle's reads are spread evenly instead of
// spending the minute's budget in a burst and being refused for the rest.
// When reddit says the budget is spent (X-Ratelimit-Remaining below 1) or
// asks for a pause (Retry-After), no slot is handed out before the time it
// named (X-Ratelimit-Reset seconds from the answer, or Retry-After). When
// it says how much is left, the rest is spread over the window: no slot
// comes sooner than Reset divided by Remaining. A 429 that names no time
// halves the budget, down to one request a minute; each quietStretch
// without a 429 doubles it back, one step at a time, up to the budget it
// was made with.
//
// Slots are booked under a lock and waited for outside it, so concurrent
// reads queue up in order instead of all waking at once.
type pacer struct {
	budget time.Duration // the gap of the budget the pacer was made with
	// burst is how many slots may be handed out at once after a quiet
	// spell; 0 or 1 spaces every request by the gap. The average stays
	// the budget: a burst spends the slots the quiet spell left unused,
	// at most burst of them.
	burst int

	mu      sync.Mutex
	next    time.Time // no request starts before this
	blocked time.Time // reddit's budget is spent until this
	halved  int       // halvings of the budget not yet undone
	quiet   time.Time // the current stretch without a 429 began here
}

func newPacer(perMinute int) *pacer {
	return &pacer{budget: time.Minute / time.Duration(perMinute)}
}

// gap is the spacing between slots now, after the halvings of the budget
// that quiet stretches have not undone. Counted from the clock when it is
// asked, not from answers, so the budget comes back however few reads
// there are. Called with mu held.
func (p *pacer) gap(now time.Time) time.Duration {
	for p.halved > 0 && !now.Before(p.quiet.Add(quietStretch)) {
		p.halved--
		p.quiet = p.quiet.Add(quietStretch)
	}
	return min(p.budget<<p.halved, max(slowestGap, p.budget))
}

// reserve books the next slot and says how long to wait for it. When the
// wait would exceed limit nothing is booked and ok is false: the caller
// gives up on reddit for now rather than stall.
func (p *pacer) reserve(now time.Time, limit time.Duration) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gap := p.gap(now)
	slot := now
	if early := p.next.Add(-time.Duration(max(p.burst-1, 0)) * gap); early.After(slot) {
		slot = early
	}
	if p.blocked.After(slot) {
		slot = p.blocked
	}
	wait = slot.Sub(now)
	if wait > limit {
		return wait, false
	}
	// next runs ahead of the slots handed out by the burst's unused
	// slots at most; without a burst it is the slot plus the gap.
	p.next = later(p.next, slot).Add(gap)
	return wait, true
}

// observe takes in the rate-limit headers of one of reddit's answers.
func (p *pacer) observe(now time.Time, h http.Header) {
	var until time.Time
	remaining, okRemaining := seconds(h.Get("X-Ratelimit-Remaining"))
	reset, okReset := seconds(h.Get("X-Ratelimit-Reset"))
	var spread time.Time
	if okRemaining && okReset {
		if remaining < 1 {
			until = now.Add(time.Duration(reset * float64(time.Second)))
		} else {
			spread = now.Add(time.Duration(reset / remaining * float64(time.Second)))
		}
	}
	if spread.After(now) {
		p.mu.Lock()
		if spread.After(p.next) {
			p.next = spread
		}
		p.mu.Unlock()
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

// heldUntil is the time reddit last asked to wait for (Retry-After, or
// a spent budget's X-Ratelimit-Reset): no slot is handed out before it.
func (p *pacer) heldUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blocked
}

// refused takes in a 429 and returns until when the ways on this budget
// rest: the time reddit named (already observed), or, when it named
// none, fallback from now, with the budget halved. Either way the quiet
// stretch that gives the budget back starts again: reddit still refuses.
func (p *pacer) refused(now time.Time, fallback time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	gap := p.gap(now)
	p.quiet = now
	if p.blocked.After(now) {
		return p.blocked
	}
	if p.budget > 0 && gap < slowestGap {
		p.halved++
	}
	p.blocked = now.Add(fallback)
	return p.blocked
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
