// Package limittest is the contract suite for ports.RateLimiter.
package limittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
)

// Run checks a limiter: a window admits limit requests per key and no
// more, even from many goroutines (or replicas sharing the limiter), keys
// are independent, a refusal says when to retry, and a peek counts
// nothing yet sees a used-up window.
func Run(t *testing.T, l ports.RateLimiter) {
	ctx := context.Background()
	key := func() string {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		return "k-" + hex.EncodeToString(b)
	}
	t.Run("Window", func(t *testing.T) {
		k := key()
		for i := 1; i <= 3; i++ {
			q, err := l.Take(ctx, k, 3)
			if err != nil || !q.Allowed || q.Remaining != 3-i || q.Limit != 3 {
				t.Fatalf("take %d: %+v, %v", i, q, err)
			}
		}
		q, err := l.Take(ctx, k, 3)
		if err != nil || q.Allowed || q.Remaining != 0 || q.Reset <= 0 || q.Reset > time.Minute {
			t.Fatalf("over the limit: %+v, %v", q, err)
		}
		if q, _ := l.Take(ctx, key(), 3); !q.Allowed || q.Remaining != 2 {
			t.Fatalf("another key: %+v", q)
		}
	})
	t.Run("Peek", func(t *testing.T) {
		k := key()
		for range 2 {
			q, err := l.Peek(ctx, k, 2)
			if err != nil || !q.Allowed || q.Remaining != 2 || q.Limit != 2 || q.Reset <= 0 || q.Reset > time.Minute {
				t.Fatalf("peek at a fresh key: %+v, %v", q, err)
			}
		}
		if q, err := l.Take(ctx, k, 2); err != nil || !q.Allowed || q.Remaining != 1 {
			t.Fatalf("take after two peeks counted them: %+v, %v", q, err)
		}
		if q, err := l.Peek(ctx, k, 2); err != nil || !q.Allowed || q.Remaining != 1 {
			t.Fatalf("peek after one take: %+v, %v", q, err)
		}
		l.Take(ctx, k, 2)
		l.Take(ctx, k, 2) // refused: the count may pass the limit
		q, err := l.Peek(ctx, k, 2)
		if err != nil || q.Allowed || q.Remaining != 0 || q.Reset <= 0 || q.Reset > time.Minute {
			t.Fatalf("peek past the limit: %+v, %v", q, err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		k := key()
		var allowed atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q, err := l.Take(ctx, k, 20)
				if err != nil {
					t.Error(err)
				}
				if q.Allowed {
					allowed.Add(1)
				}
			}()
		}
		wg.Wait()
		if allowed.Load() != 20 {
			t.Fatalf("%d of 50 concurrent requests allowed, want 20", allowed.Load())
		}
	})
}
