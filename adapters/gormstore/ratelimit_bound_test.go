package gormstore

import (
	"context"
	"strconv"
	"testing"
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
			db := openPools(t, url, 1, newTestClock())[0]
			l := NewRateLimiter(db)
			l.maxHeld = heldCap
			const keys = 3 * heldCap
			for i := range keys {
				if _, err := l.Take(ctx, "auth:"+strconv.Itoa(i), 1); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(l.held); n > heldCap {
				t.Fatalf("%d leases held for %d keys, over the bound of %d", n, keys, heldCap)
			}
			last := "auth:" + strconv.Itoa(keys-1)
			if q, err := l.Take(ctx, last, 1); err != nil || q.Allowed {
				t.Fatalf("the newest key taken again: %+v, %v", q, err)
			}
		})
	}
}
