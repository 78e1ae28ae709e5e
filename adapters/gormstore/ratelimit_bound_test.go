package gormstore

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// heldCap is the bound the tests hold the limiter to, lowered from
// maxLeases so that Postgres can take a few times as many keys in a test.
const heldCap = 500

// Callers from more addresses than the limiter keeps send bad keys within
// one window, each "auth:ADDR" a key: the leases held stay at the bound,
// and the key counted last is still counted.
func TestRateLimiterKeysBounded(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			l := testLimiter(t, url, newTestClock(), heldCap)
			const keys = 3 * heldCap
			for i := range keys {
				if _, err := l.Take(ctx, "auth:"+strconv.Itoa(i), 1); err != nil {
					t.Fatal(err)
				}
			}
			if n, o := len(l.held), len(l.order)-l.head; n > heldCap || o > 2*heldCap {
				t.Fatalf("%d leases held and %d queued for %d keys, over the bound of %d", n, o, keys, heldCap)
			}
			last := "auth:" + strconv.Itoa(keys-1)
			if q, err := l.Take(ctx, last, 1); err != nil || q.Allowed {
				t.Fatalf("the newest key taken again: %+v, %v", q, err)
			}
		})
	}
}

// A lease dropped past the bound while it holds tokens loses them: the
// database counted them when the chunk was leased, so the key is refused
// that many requests early in its window, never admitted past its limit.
func TestRateLimiterDroppedLeaseRefusesEarly(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			l := testLimiter(t, url, newTestClock(), 10)
			const limit = 2000
			key := newKey()
			for range 2 { // the second leases 19, 1% of the 1,999 left, and holds 18
				if q, err := l.Take(ctx, key, limit); err != nil || !q.Allowed {
					t.Fatalf("take: %+v, %v", q, err)
				}
			}
			for i := range l.maxHeld {
				if _, err := l.Take(ctx, "auth:"+strconv.Itoa(i), 60); err != nil {
					t.Fatal(err)
				}
			}
			if l.held[key] != nil {
				t.Fatal("the oldest lease is still held past the bound")
			}
			admitted := 2
			for {
				q, err := l.Take(ctx, key, limit)
				if err != nil {
					t.Fatal(err)
				}
				if !q.Allowed {
					break
				}
				admitted++
			}
			if admitted != limit-18 {
				t.Fatalf("%d admitted after the lease holding 18 tokens was dropped, want %d", admitted, limit-18)
			}
		})
	}
}

// A key in use is queued again once a window, so past the bound the
// leases dropped first are those least recently used, not the key seen
// first.
func TestRateLimiterDropsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			clock := newTestClock()
			l := testLimiter(t, url, clock, 10)
			take := func(key string) {
				t.Helper()
				if _, err := l.Take(ctx, key, 60); err != nil {
					t.Fatal(err)
				}
			}
			take("sweeps from here")
			clock.advance(rateWindow / 2)
			busy := newKey()
			take(busy) // its window ends half a window after the next sweep
			clock.advance(rateWindow / 2)
			take("auth:0") // the sweep, then a key seen once
			clock.advance(rateWindow / 2)
			take(busy) // a window after it was queued: queued again
			for i := 1; i < l.maxHeld; i++ {
				take("auth:" + strconv.Itoa(i))
			}
			if l.held[busy] == nil || l.held["auth:0"] != nil {
				t.Fatalf("past the bound: the busy key held %v, the key seen once held %v", l.held[busy] != nil, l.held["auth:0"] != nil)
			}
		})
	}
}

// testLimiter is a limiter on one pool of the database at url, on
// clock, that holds at most maxHeld leases (0: the default bound).
func testLimiter(t *testing.T, url string, clock *testClock, maxHeld int) *RateLimiter {
	t.Helper()
	l := NewRateLimiter(openPools(t, url, 1, clock)[0])
	if maxHeld > 0 {
		l.maxHeld = maxHeld
	}
	return l
}

// countRows is the number of rate windows stored.
func countRows(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	if err := db.gorm.Model(&rateWindowRow{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// The table holds one row a key, taken again in later windows, and the
// sweep deletes a row two windows after its window began, a window after
// it ended.
func TestRateWindowsSwept(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			clock := newTestClock()
			l := testLimiter(t, url, clock, 0)
			const keys = 50
			for w := range 2 {
				for i := range keys {
					if _, err := l.Take(ctx, "auth:"+strconv.Itoa(i), 60); err != nil {
						t.Fatal(err)
					}
				}
				if n := countRows(t, l.db); n != keys {
					t.Fatalf("%d rows after %d keys in window %d", n, keys, w)
				}
				clock.advance(rateWindow)
			}
			clock.advance(rateWindow)
			if err := l.SweepRateWindows(ctx); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, l.db); n != keys {
				t.Fatalf("%d rows swept two windows after they began, want none", keys-n)
			}
			clock.advance(time.Microsecond)
			if err := l.SweepRateWindows(ctx); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, l.db); n != 0 {
				t.Fatalf("%d rows left after their windows ended", n)
			}
		})
	}
}
