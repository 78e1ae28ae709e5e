package gormstore

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/earshothq/earshot/ports"
)

// RateLimiter counts requests per key in fixed one-minute windows kept in
// the database, so the limit holds across replicas. With leaseFrom or more
// left, a request leases a chunk: the database counts it whole and grants
// what the limit allows, and the process admits from those tokens until
// the window ends. Never more than the limit is admitted; a key served by
// n replicas may be refused up to 99·(n-1) requests early, and Remaining
// reads up to 99 low per other replica (docs/adr/0012-store-tricks-by-figure.md).
type RateLimiter struct {
	db    *DB
	mu    sync.Mutex
	held  map[string]*lease // keys seen in a window, at most maxHeld
	swept time.Time
	// order holds the leases from order[head] on, least recently queued
	// first, so the oldest is dropped past maxHeld without a scan of held.
	// An entry whose key now has another lease, or whose lease was queued
	// again since, is stale and skipped.
	order   []leaseEntry
	head    int
	maxHeld int
}

// maxLeases bounds the leases a process holds. Keys come from callers
// (every request peeks at its address's failed keys, and each address
// sending a bad key is counted), so without a bound callers from many
// addresses would grow held by one lease a request for up to two
// windows. At some 250 bytes a lease (an IPv6 /64 key, its map entry and
// its place in order) the bound is about 25 MB; past it the least
// recently used lease is dropped, as the in-memory limiter drops its
// oldest window. Dropping a lease never admits a request the limit does
// not allow: the database counts every request, and every chunk when it
// is leased, and a process admits only from what the database granted.
// A dropped lease's unused tokens are lost, so its key may be refused up
// to 99 requests early in that window, never admitted late; the count it
// read is forgotten too, so the key's next request asks the database.
const maxLeases = 100_000

type leaseEntry struct {
	key    string
	b      *lease
	queued int64 // b.queued when the entry was made
}

// lease is what this process knows of one key's current window.
type lease struct {
	started int64         // the window's stored start (µs)
	seen    int64         // the largest count the database answered in it
	read    time.Time     // when the database last answered
	tokens  int64         // leased and granted, not yet admitted
	excess  int64         // counted by this process's chunks beyond what they were granted
	leasing chan struct{} // closed when the lease in flight answers; nil when none is
	queued  int64         // when it was last put in order (µs)
}

func NewRateLimiter(db *DB) *RateLimiter {
	return &RateLimiter{db: db, held: map[string]*lease{}, maxHeld: maxLeases}
}

const (
	rateWindow = time.Minute
	// A chunk is 1% of what is left, at most 100, so a replica strands
	// under 1% of the limit; from 1,000 left it is at least 10.
	leaseFrom, leaseShare, leaseMax = 1000, 100, 100
)

type rateWindowRow struct {
	Key                 string `gorm:"primaryKey"`
	Started, Count, Lim int64  // Started in µs; Count may pass Lim: refusals and ungranted chunk parts count
}

func (rateWindowRow) TableName() string { return "rate_windows" }

// lease returns key's lease, made if new, sweeping ended windows once a
// window length. A lease in use is queued again once a window, so the
// oldest in order is the one least recently used. l.mu is held.
func (l *RateLimiter) lease(key string, now time.Time) *lease {
	if now.Sub(l.swept) >= rateWindow {
		l.swept = now
		ended := micros(now.Add(-rateWindow))
		maps.DeleteFunc(l.held, func(_ string, b *lease) bool { return b.started <= ended && b.leasing == nil })
		// Drop the entries of what the sweep forgot, and the stale.
		live := l.order[:0]
		for _, e := range l.order[l.head:] {
			if l.live(e) {
				live = append(live, e)
			}
		}
		clear(l.order[len(live):])
		l.order, l.head = live, 0
	}
	b := l.held[key]
	if b == nil {
		b = &lease{}
		l.held[key] = b
		l.queue(key, b, now)
	} else if b.queued <= micros(now.Add(-rateWindow)) {
		l.queue(key, b, now)
	}
	return b
}

// queue puts b last in order, then drops the oldest while more than
// maxHeld are held. The order is bounded too: a clock moved back can
// leave stale entries behind. l.mu is held.
func (l *RateLimiter) queue(key string, b *lease, now time.Time) {
	b.queued = micros(now)
	l.order = append(l.order, leaseEntry{key, b, b.queued})
	for l.head < len(l.order)-1 && (len(l.held) > l.maxHeld || len(l.order)-l.head > 2*l.maxHeld) {
		l.dropOldest()
	}
}

// live tells whether e is its lease's newest entry and the lease is held.
func (l *RateLimiter) live(e leaseEntry) bool { return l.held[e.key] == e.b && e.b.queued == e.queued }

// dropOldest forgets the oldest entry of order and its lease, unless it
// is stale, and gives back the room the dropped entries held. A lease in
// flight is forgotten too: its Take adds what the database grants to the
// key's next lease, and requests meanwhile may lease beside it, each
// chunk counted by the database. l.mu is held.
func (l *RateLimiter) dropOldest() {
	e := l.order[l.head]
	l.order[l.head] = leaseEntry{}
	l.head++
	if l.live(e) {
		delete(l.held, e.key)
	}
	if l.head >= len(l.order)/2 {
		n := copy(l.order, l.order[l.head:])
		clear(l.order[n:])
		l.order, l.head = l.order[:n], 0
	}
}

// answered records a count the database answered at now. l.mu is held.
func (b *lease) answered(started, count int64, now time.Time) {
	switch {
	case started > b.started: // a newer window: what was held is gone
		b.started, b.seen, b.tokens, b.excess = started, count, 0, 0
	case started == b.started:
		b.seen = max(b.seen, count)
	}
	b.read = now
}

// remaining is the limit less the requests known counted: the
// database's count without this process's unused tokens and excess.
func (b *lease) remaining(limit int) int {
	return int(min(max(int64(limit)-(b.seen-b.tokens-b.excess), 0), int64(limit)))
}

func (l *RateLimiter) Take(ctx context.Context, key string, limit int) (ports.Quota, error) {
	for {
		now := l.db.gorm.NowFunc()
		l.mu.Lock()
		b := l.lease(key, now)
		if b.leasing != nil { // one lease per key at a time: wait for it and take from it
			wait := b.leasing
			l.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ports.Quota{}, ctx.Err()
			}
		}
		k := int64(1)
		if b.started > micros(now.Add(-rateWindow)) {
			if b.tokens > 0 {
				b.tokens--
				q := ports.Quota{Allowed: true, Limit: limit, Remaining: b.remaining(limit), Reset: fromMicros(b.started).Add(rateWindow).Sub(now)}
				l.mu.Unlock()
				return q, nil
			}
			if left := int64(limit) - b.seen; left >= leaseFrom {
				k = min(left/leaseShare, leaseMax)
				b.leasing = make(chan struct{})
			}
		}
		l.mu.Unlock()

		// One statement counts and answers, so replicas counting at once
		// never both take the last request.
		expired := micros(now.Add(-rateWindow))
		var w rateWindowRow
		err := l.db.write(ctx).Raw(`INSERT INTO rate_windows (key, started, count, lim) VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET
				started = CASE WHEN rate_windows.started <= ? THEN excluded.started ELSE rate_windows.started END,
				count   = CASE WHEN rate_windows.started <= ? THEN excluded.count ELSE rate_windows.count + excluded.count END,
				lim     = excluded.lim
			RETURNING started, count`, key, micros(now), k, limit, expired, expired).Scan(&w).Error

		l.mu.Lock()
		if k > 1 {
			close(b.leasing)
			b.leasing = nil
		}
		if err != nil {
			l.mu.Unlock()
			return ports.Quota{}, translate(err, "rate window")
		}
		granted := min(max(int64(limit)-(w.Count-k), 0), k) // what the limit had left before the chunk
		b = l.lease(key, now)
		b.answered(w.Started, w.Count, now)
		q := ports.Quota{Limit: limit, Reset: fromMicros(w.Started).Add(rateWindow).Sub(now), Remaining: max(limit-int(w.Count), 0)}
		if w.Started == b.started { // else counted in a window that has ended: the chunk's rest is dropped
			// This request takes one token; a refused one counts one.
			b.tokens += max(granted-1, 0)
			b.excess += k - max(granted, 1)
			if granted == 0 && b.tokens > 0 { // refused while a chunk leased beside it holds tokens: take one
				b.tokens--
				b.excess++
				granted = 1
			}
			q.Remaining = b.remaining(limit)
		}
		l.mu.Unlock()
		if q.Allowed = granted > 0; !q.Allowed {
			q.Remaining = 0
		}
		return q, nil
	}
}

// Peek implements ports.RateLimiter. On Postgres, where every request
// peeks at its address's failed keys, a count read less than keyTrust
// ago is used again.
func (l *RateLimiter) Peek(ctx context.Context, key string, limit int) (ports.Quota, error) {
	now := l.db.gorm.NowFunc()
	l.mu.Lock()
	if b := l.lease(key, now); !l.db.postgres || now.Before(b.read) || now.Sub(b.read) >= keyTrust {
		l.mu.Unlock()
		var w rateWindowRow
		if err := l.db.with(ctx).Where("key = ?", key).Limit(1).Find(&w).Error; err != nil {
			return ports.Quota{}, translate(err, "rate window")
		}
		l.mu.Lock()
		l.lease(key, now).answered(w.Started, w.Count, now)
	}
	defer l.mu.Unlock()
	b := l.lease(key, now)
	if b.started <= micros(now.Add(-rateWindow)) {
		return ports.Quota{Allowed: limit > 0, Limit: limit, Remaining: max(limit, 0), Reset: rateWindow}, nil
	}
	q := ports.Quota{Limit: limit, Reset: fromMicros(b.started).Add(rateWindow).Sub(now), Remaining: max(b.remaining(limit), 0)}
	q.Allowed = q.Remaining > 0
	return q, nil
}

// SweepRateWindows deletes ended windows, so keys seen once go.
func (l *RateLimiter) SweepRateWindows(ctx context.Context) error {
	cut := micros(l.db.gorm.NowFunc().Add(-2 * rateWindow))
	return translate(l.db.write(ctx).Where("started < ?", cut).Delete(&rateWindowRow{}).Error, "rate window")
}
