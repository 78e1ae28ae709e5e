package gormstore

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/earshothq/earshot/ports"
)

// RateLimiter counts requests per key in fixed one-minute windows kept in
// the database, so the limit holds across every replica (Postgres).
//
// With leaseFrom or more requests left, a request leases a chunk: the
// database counts it whole and grants what the limit allows, and the
// process admits from those tokens in memory until the window ends
// (docs/adr/0012-store-tricks-by-figure.md). Never more than the limit is
// admitted; a key served by n replicas may be refused up to 99·(n-1)
// requests early, and Remaining reads up to 99 low per other replica.
type RateLimiter struct {
	db    *DB
	mu    sync.Mutex
	held  map[string]*lease // keys seen in a window
	swept time.Time
}

// lease is what this process knows of one key's current window.
type lease struct {
	started int64         // the window's stored start (µs)
	seen    int64         // the largest count the database answered in it
	tokens  int64         // leased and granted, not yet admitted
	excess  int64         // counted by this process's chunks beyond what they were granted
	leasing chan struct{} // closed when the lease in flight answers; nil when none is
}

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter returns the database-backed limiter of db.
func NewRateLimiter(db *DB) *RateLimiter { return &RateLimiter{db: db, held: map[string]*lease{}} }

const (
	rateWindow = time.Minute
	// A chunk is at most 1% of what is left, so a replica strands under 1%
	// of the limit, and at most 100; from 1,000 left it is at least 10.
	leaseFrom  = 1000 // requests left from which chunks are leased
	leaseShare = 100  // a chunk is at most 1/leaseShare of what is left
	leaseMax   = 100  // and at most this many requests
)

type rateWindowRow struct {
	Key     string `gorm:"primaryKey"`
	Started int64  // µs
	Count   int64  // may pass Lim: refused requests and ungranted chunk parts count
	Lim     int64  // for the trigger that announces the window used up (listen.go)
}

func (rateWindowRow) TableName() string { return "rate_windows" }

// count counts k requests of key at now and answers in one statement,
// so replicas counting at once never both take the last request. A
// count that reaches limit marks the window used up here at once; the
// other processes hear it from Postgres.
func (l *RateLimiter) count(ctx context.Context, key string, now time.Time, k int64, limit int) (started, count int64, err error) {
	expired := micros(now.Add(-rateWindow))
	var w rateWindowRow
	if err := l.db.with(ctx).Raw(`INSERT INTO rate_windows (key, started, count, lim) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET
			started = CASE WHEN rate_windows.started <= ? THEN excluded.started ELSE rate_windows.started END,
			count   = CASE WHEN rate_windows.started <= ? THEN excluded.count ELSE rate_windows.count + excluded.count END,
			lim     = excluded.lim
		RETURNING started, count`, key, micros(now), k, limit, expired, expired).Scan(&w).Error; err != nil {
		return 0, 0, translate(err, "rate window")
	}
	if l.db.postgres && w.Count >= int64(limit) {
		l.db.memory.usedUp(key, w.Started)
	}
	return w.Started, w.Count, nil
}

// usedUpWindows reads the start of every used-up window not yet ended, by key.
func (db *DB) usedUpWindows(ctx context.Context) (map[string]int64, error) {
	var rows []rateWindowRow
	ended := micros(db.gorm.NowFunc().Add(-rateWindow))
	if err := db.with(ctx).Where("lim > 0 AND count >= lim AND started > ?", ended).Find(&rows).Error; err != nil {
		return nil, err
	}
	used := make(map[string]int64, len(rows))
	for _, r := range rows {
		used[r.Key] = r.Started
	}
	return used, nil
}

// Take implements ports.RateLimiter.
func (l *RateLimiter) Take(ctx context.Context, key string, limit int) (ports.Quota, error) {
	for {
		now := l.db.gorm.NowFunc()
		ended := micros(now.Add(-rateWindow)) // windows started then or before have ended
		l.mu.Lock()
		if now.Sub(l.swept) >= rateWindow { // keys seen once go; a lease in flight stays
			l.swept = now
			maps.DeleteFunc(l.held, func(_ string, b *lease) bool { return b.started <= ended && b.leasing == nil })
		}
		b := l.held[key]
		if b != nil && b.leasing != nil { // one lease per key at a time: wait for it and take from it
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
		if b != nil && b.started > ended {
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

		started, count, err := l.count(ctx, key, now, k, limit)

		l.mu.Lock()
		if k > 1 {
			close(b.leasing)
			b.leasing = nil
		}
		if err != nil {
			l.mu.Unlock()
			return ports.Quota{}, err
		}
		granted := min(max(int64(limit)-(count-k), 0), k) // what the limit had left before the chunk
		if b = l.held[key]; b == nil {
			b = &lease{}
			l.held[key] = b
		}
		switch {
		case started > b.started: // a newer window: what was held is gone
			b.started, b.seen, b.tokens, b.excess = started, count, 0, 0
		case started == b.started:
			b.seen = max(b.seen, count)
		}
		q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now), Remaining: max(limit-int(count), 0)}
		if started == b.started { // else counted in a window that has ended: the chunk's rest is dropped
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

// remaining is the limit less the requests this process knows were
// counted: the database's count without its unused tokens and excess.
func (b *lease) remaining(limit int) int {
	return int(min(max(int64(limit)-(b.seen-b.tokens-b.excess), 0), int64(limit)))
}

// Peek implements ports.RateLimiter. Tokens this process holds unused
// are not requests.
func (l *RateLimiter) Peek(ctx context.Context, key string, limit int) (ports.Quota, error) {
	now := l.db.gorm.NowFunc()
	if l.db.postgres {
		l.db.listen()
		if q, ok := l.peekHere(key, limit, now); ok {
			return q, nil
		}
	}
	var w rateWindowRow
	res := l.db.with(ctx).Where("key = ?", key).Limit(1).Find(&w)
	if res.Error != nil {
		return ports.Quota{}, translate(res.Error, "rate window")
	}
	if res.RowsAffected == 0 || w.Started <= micros(now.Add(-rateWindow)) {
		return ports.Quota{Allowed: limit > 0, Limit: limit, Remaining: max(limit, 0), Reset: rateWindow}, nil
	}
	count := w.Count
	l.mu.Lock()
	if b := l.held[key]; b != nil && b.started == w.Started { // a lease answered after the read is in b
		count = max(max(count, b.seen)-b.tokens-b.excess, 0)
	}
	l.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: fromMicros(w.Started).Add(rateWindow).Sub(now)}
	if count < int64(limit) {
		q.Allowed, q.Remaining = true, limit-int(count)
	}
	return q, nil
}

// peekHere answers Peek from memory while this process listens: a
// window is used up when this process counted it so or Postgres said
// another did. Remaining may read high where others counted; the edge
// reads only Allowed and Reset.
func (l *RateLimiter) peekHere(key string, limit int, now time.Time) (ports.Quota, bool) {
	usedAt, used, known := l.db.memory.window(key, now)
	if !known {
		return ports.Quota{}, false
	}
	l.mu.Lock()
	var started, counted, tokens int64
	if b := l.held[key]; b != nil && b.started > micros(now.Add(-rateWindow)) {
		started, counted, tokens = b.started, b.seen-b.tokens-b.excess, b.tokens
	}
	l.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: rateWindow}
	if used && !(usedAt == started && tokens > 0) { // tokens held here are not used
		q.Reset = fromMicros(usedAt).Add(rateWindow).Sub(now)
		return q, true
	}
	if started > 0 {
		q.Reset = fromMicros(started).Add(rateWindow).Sub(now)
	}
	if counted < int64(limit) {
		q.Allowed, q.Remaining = true, limit-int(max(counted, 0))
	}
	return q, true
}

// SweepRateWindows deletes ended windows, so keys seen once go.
func (l *RateLimiter) SweepRateWindows(ctx context.Context) error {
	cut := micros(l.db.gorm.NowFunc().Add(-2 * rateWindow))
	return translate(l.db.with(ctx).Where("started < ?", cut).Delete(&rateWindowRow{}).Error, "rate window")
}
