package gormstore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// One key is taken and peeked from several goroutines while others send
// new keys past a bound of 2, so its lease is dropped again and again,
// in flight too: never more than its limit is admitted in its window.
// Run with -race, this also checks the lease's fields under l.mu.
func TestRateLimiterChurnNeverAdmitsOver(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			l := testLimiter(t, url, newTestClock(), 2)
			const limit = 1200 // leases chunks of 12 at first
			key := newKey()
			var admitted, refused atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for refused.Load() == 0 {
						q, err := l.Take(ctx, key, limit)
						if err != nil {
							t.Error(err)
							return
						}
						if q.Allowed {
							admitted.Add(1)
						} else {
							refused.Add(1)
						}
					}
				})
			}
			for g := range 2 {
				wg.Go(func() {
					for i := 0; refused.Load() == 0; i++ {
						if _, err := l.Take(ctx, "auth:"+strconv.Itoa(g)+":"+strconv.Itoa(i), 5); err != nil {
							t.Error(err)
							return
						}
						if _, err := l.Peek(ctx, key, limit); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if n := admitted.Load(); n > limit {
				t.Fatalf("%d admitted, over the limit of %d", n, limit)
			}
			if n, o := len(l.held), len(l.order)-l.head; n > 2 || o > 4 {
				t.Fatalf("%d leases held and %d queued, over the bound of 2", n, o)
			}
		})
	}
}
