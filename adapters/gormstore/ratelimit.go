package gormstore

import (
	"context"
	"sync"
	"time"

	"github.com/earshothq/earshot/ports"
)

// RateLimiter counts requests per key in fixed one-minute windows kept in
// the database, so the limit holds across every replica on it.
//
// While a window has less than leaseFrom requests left (as this process
// last saw it), every request is one statement that both counts and
// answers; with limits under leaseFrom, the default 60 among them, that is
// all it ever does. With more left, a request leases a chunk of the quota
// (chunk): the database counts the whole chunk at once, only as much of it
// as the limit still allows is granted, and the process admits requests
// from the granted tokens in memory while the chunk's window lasts. Tokens
// left when the window ends are dropped. So no more than the limit is ever
// admitted per key and window across all processes.
//
// The price is under-admission. A process leases only once its own
// tokens are gone, so it holds at most one chunk's rest per key: at most
// 99 tokens (leaseMax-1), and under 1% of the limit. It refuses nothing
// while it holds tokens of the current window, so when one replica is
// refused the tokens still unused are the other replicas', and a key
// served by n replicas is refused at most 99·(n-1) requests early in a
// window (under (n-1)% of its limit). They are lost only if the replica
// holding them gets no more of that key's requests before the window
// ends: chunks stop once fewer than 1,000 are left, so replicas that keep
// serving a key use up what they hold before the limit is reached.
//
// X-RateLimit-Remaining (Quota.Remaining) is the limit minus the requests
// this process counted: its own unused tokens are not subtracted, so for
// one process it is exact. With several, the other replicas' unused
// tokens are in the database count too, so it may read up to 99 lower per
// other replica. Peek, on Postgres, answers from memory while the
// process listens for used-up windows (peekHere); otherwise it reads the
// database and likewise adds back this process's own unused tokens; the
// other replicas' unused ones (at most 99 each) may make it refuse that
// much early.
//
// Windows are judged on each process's clock, as the single statement
// always did: clocks that disagree by d may let a replica admit from a
// chunk for up to d after a faster one opened the next window.
type RateLimiter struct {
	db *DB

	mu    sync.Mutex
	held  map[string]*lease // keys with limits of leaseFrom and more, seen in a window
	swept time.Time
}

// lease is what one process knows of one key's current window.
type lease struct {
	started int64         // the window (its stored start, µs) the counts below belong to
	seen    int64         // the largest count the database answered in that window
	tokens  int64         // leased and granted, not yet admitted
	excess  int64         // counted by this process's chunks beyond what they were granted
	leasing chan struct{} // closed when the lease in flight has answered; nil when none is
}

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter returns the database-backed limiter of db.
func NewRateLimiter(db *DB) *RateLimiter {
	return &RateLimiter{db: db, held: map[string]*lease{}}
}

// rateWindow is the length of a counting window.
const rateWindow = time.Minute

// The chunk rule. Chunks of at most 1% of what is left keep the tokens
// that one replica can strand under 1% of the limit, and the cap bounds
// them outright; from 1,000 left a chunk is at least 10, so the database
// sees a tenth of the requests or fewer, and at large limits one in 100.
const (
	leaseFrom  = 1000 // requests left from which chunks are leased
	leaseShare = 100  // a chunk is at most 1/leaseShare of what is left
	leaseMax   = 100  // and at most this many requests
)

// chunk is how many requests to lease when left remain in the window as
// last seen.
func chunk(left int64) int64 {
	if left < leaseFrom {
		return 1
	}
	return min(left/leaseShare, leaseMax)
}

// takeQuota counts k requests and answers with the window, in one
// statement on a cached prepared statement. The count may pass the limit:
// a refused request counts, and so does the part of a chunk the limit did
// not grant.
// The window keeps the limit it is counted against (lim), for the
// trigger that announces it used up (listen.go).
const takeQuota = `INSERT INTO rate_windows (key, started, count, lim) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET
			started = CASE WHEN rate_windows.started <= ? THEN excluded.started ELSE rate_windows.started END,
			count   = CASE WHEN rate_windows.started <= ? THEN excluded.count ELSE rate_windows.count + excluded.count END,
			lim     = excluded.lim
		RETURNING started, count`

// count runs takeQuota for k requests of key at now. On Postgres a
// count that reaches limit marks the window used up in this process at
// once (peekHere); other processes hear of it from Postgres.
func (l *RateLimiter) count(ctx context.Context, key string, now time.Time, k int64, limit int) (started, count int64, err error) {
	expired := micros(now.Add(-rateWindow))
	rows, err := l.db.query(ctx, takeQuota, key, micros(now), k, limit, expired, expired)
	if err != nil {
		return 0, 0, translate(err, "rate window")
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&started, &count); err != nil {
			return 0, 0, translate(err, "rate window")
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, translate(err, "rate window")
	}
	if l.db.postgres && count >= int64(limit) {
		l.db.windows.usedUp(key, started)
	}
	return started, count, nil
}

// Take implements ports.RateLimiter.
func (l *RateLimiter) Take(ctx context.Context, key string, limit int) (ports.Quota, error) {
	if limit < leaseFrom { // never enough left for a chunk
		now := l.db.gorm.NowFunc()
		started, count, err := l.count(ctx, key, now, 1, limit)
		if err != nil {
			return ports.Quota{}, err
		}
		l.saw(key, started, count, now)
		q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now)}
		if count > int64(limit) {
			return q, nil
		}
		q.Allowed, q.Remaining = true, limit-int(count)
		return q, nil
	}
	for {
		now := l.db.gorm.NowFunc()
		ended := micros(now.Add(-rateWindow)) // windows started then or before have ended
		l.mu.Lock()
		l.sweep(now)
		b := l.held[key]
		if b != nil && b.leasing != nil {
			// One lease per key at a time: wait for it and take from it.
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
				q := ports.Quota{Allowed: true, Limit: limit, Remaining: b.remaining(limit),
					Reset: fromMicros(b.started).Add(rateWindow).Sub(now)}
				l.mu.Unlock()
				return q, nil
			}
			k = chunk(int64(limit) - b.seen)
		}
		if k > 1 {
			b.leasing = make(chan struct{})
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
		// A chunk is granted what the limit had left before it.
		granted := min(max(int64(limit)-(count-k), 0), k)
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
		q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now)}
		if started == b.started {
			// This request takes one token; a refused one counts one, as a
			// single statement does.
			b.tokens += max(granted-1, 0)
			b.excess += k - max(granted, 1)
			if granted == 0 && b.tokens > 0 {
				// Refused by the database while a chunk leased beside
				// it still holds tokens: this process refuses nothing
				// before its own tokens are gone, and its refused count
				// is not a request.
				b.tokens--
				b.excess++
				granted = 1
			}
			q.Remaining = b.remaining(limit)
		} else {
			// Answered in a window that has since ended: this request was
			// counted in it; the rest of the chunk is dropped.
			q.Remaining = max(limit-int(count), 0)
		}
		l.mu.Unlock()
		if granted == 0 {
			q.Remaining = 0
			return q, nil
		}
		q.Allowed = true
		return q, nil
	}
}

// remaining is the limit less the requests this process knows were
// counted in b's window: the database's count without its own unused
// tokens and ungranted chunk parts.
func (b *lease) remaining(limit int) int {
	return int(min(max(int64(limit)-(b.seen-b.tokens-b.excess), 0), int64(limit)))
}

// saw records the count a single statement answered for key, for Peek.
func (l *RateLimiter) saw(key string, started, count int64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.held[key]
	if b == nil {
		b = &lease{}
		l.held[key] = b
	}
	if started > b.started {
		b.started, b.seen, b.tokens, b.excess = started, count, 0, 0
	} else if started == b.started {
		b.seen = max(b.seen, count)
	}
}

// sweep drops windows that ended, once a window length, so keys seen
// once do not stay forever. A key with a lease in flight stays.
func (l *RateLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < rateWindow {
		return
	}
	l.swept = now
	ended := micros(now.Add(-rateWindow))
	for k, b := range l.held {
		if b.started <= ended && b.leasing == nil {
			delete(l.held, k)
		}
	}
}

// Peek implements ports.RateLimiter. It reads through a cached statement,
// since the API peeks before every key lookup, and then takes away the
// tokens this process holds unused, which the database counts.
func (l *RateLimiter) Peek(ctx context.Context, key string, limit int) (ports.Quota, error) {
	now := l.db.gorm.NowFunc()
	if l.db.postgres {
		l.db.listen()
		if q, ok := l.peekHere(key, limit, now); ok {
			return q, nil
		}
	}
	rows, err := l.db.query(ctx, "SELECT started, count FROM rate_windows WHERE key = ?", key)
	if err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	defer rows.Close()
	var started, count int64
	found := rows.Next()
	if found {
		if err := rows.Scan(&started, &count); err != nil {
			return ports.Quota{}, translate(err, "rate window")
		}
	}
	if err := rows.Err(); err != nil {
		return ports.Quota{}, translate(err, "rate window")
	}
	if !found || started <= micros(now.Add(-rateWindow)) {
		return ports.Quota{Allowed: limit > 0, Limit: limit, Remaining: max(limit, 0), Reset: rateWindow}, nil
	}
	l.mu.Lock()
	if b := l.held[key]; b != nil && b.started == started {
		// A lease answered after the read is in b.seen, and its tokens
		// in b.tokens: the larger count goes with them.
		count = max(max(count, b.seen)-b.tokens-b.excess, 0)
	}
	l.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: fromMicros(started).Add(rateWindow).Sub(now)}
	if count < int64(limit) {
		q.Allowed, q.Remaining = true, limit-int(count)
	}
	return q, nil
}

// peekHere answers Peek from memory on Postgres while this process
// listens (listen.go): a window is used up when this process counted it
// so or Postgres said another did. Remaining is the limit less the
// requests this process knows were counted in the window, so it may
// read high where other processes counted too; the edge only looks at
// Allowed and Reset. A window another process used up is refused from
// the moment Postgres says so, a millisecond or so after its commit:
// requests that peek meanwhile are let through, as requests that peek
// at the same moment always were.
func (l *RateLimiter) peekHere(key string, limit int, now time.Time) (ports.Quota, bool) {
	usedAt, used, known := l.db.windows.lookup(key, now)
	if !known {
		return ports.Quota{}, false
	}
	ended := micros(now.Add(-rateWindow))
	l.mu.Lock()
	var started, counted, tokens int64
	if b := l.held[key]; b != nil && b.started > ended {
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

// SweepRateWindows deletes windows that ended, so keys seen once do not
// stay forever.
func (l *RateLimiter) SweepRateWindows(ctx context.Context) error {
	cut := micros(l.db.gorm.NowFunc().Add(-2 * rateWindow))
	return translate(l.db.with(ctx).Exec("DELETE FROM rate_windows WHERE started < ?", cut).Error, "rate window")
}
