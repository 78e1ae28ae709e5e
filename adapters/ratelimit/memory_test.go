package ratelimit

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestMemoryWindow(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMemory(func() time.Time { return now })
	for i := 1; i <= 3; i++ {
		q, _ := m.Take(context.Background(), "k", 3)
		if !q.Allowed || q.Remaining != 3-i || q.Limit != 3 {
			t.Fatalf("take %d: %+v", i, q)
		}
	}
	now = now.Add(20 * time.Second)
	q, _ := m.Take(context.Background(), "k", 3)
	if q.Allowed || q.Remaining != 0 || q.Reset != 40*time.Second {
		t.Fatalf("over the limit: %+v", q)
	}
	if q, _ := m.Take(context.Background(), "other", 3); !q.Allowed {
		t.Fatal("keys share a window")
	}
	now = now.Add(40 * time.Second)
	if q, _ := m.Take(context.Background(), "k", 3); !q.Allowed || q.Remaining != 2 {
		t.Fatalf("new window: %+v", q)
	}
	now = now.Add(2 * time.Minute)
	m.Take(context.Background(), "fresh", 3)
	if len(m.windows) != 1 {
		t.Fatalf("ended windows kept: %d", len(m.windows))
	}
}

func TestMemoryConcurrent(t *testing.T) {
	m := NewMemory(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if q, _ := m.Take(context.Background(), "k", 60); q.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 60 {
		t.Fatalf("%d allowed, want 60", allowed)
	}
}

// TestMemoryKeysBounded sends more distinct keys in one window than the
// limiter keeps, as callers from that many addresses sending bad keys
// would (each "auth:ADDR" is a key): the windows held stay at maxKeys,
// and the key counted last is still counted.
func TestMemoryKeysBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMemory(func() time.Time { return now })
	ctx := context.Background()
	for i := range 2 * maxKeys {
		m.Take(ctx, "auth:"+strconv.Itoa(i), 1)
		if i%1000 == 0 {
			now = now.Add(time.Millisecond)
		}
	}
	if n := len(m.windows); n > maxKeys {
		t.Fatalf("%d windows held for %d keys, over the bound of %d", n, 2*maxKeys, maxKeys)
	}
	last := "auth:" + strconv.Itoa(2*maxKeys-1)
	if q, _ := m.Take(ctx, last, 1); q.Allowed {
		t.Fatal("the newest key's count was dropped")
	}
}
