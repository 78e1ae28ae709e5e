package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// The API Takes and Peeks on every request, so these measure that path:
// one caller, a few hundred callers, and a new caller each request (the
// bad-key path, where each address is a key) with the clock moving on so
// windows end and are dropped.

func BenchmarkTakePeekOneKey(b *testing.B) {
	m := NewMemory(nil)
	ctx := context.Background()
	for b.Loop() {
		m.Take(ctx, "key:1", 1<<30)
		m.Peek(ctx, "owner:1", 1<<30)
	}
}

func BenchmarkTakePeekManyKeys(b *testing.B) {
	m := NewMemory(nil)
	ctx := context.Background()
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
	}
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		m.Take(ctx, k, 1<<30)
		m.Peek(ctx, k, 1<<30)
		i++
	}
}

func BenchmarkTakeNewKeys(b *testing.B) {
	now := time.Unix(1000, 0)
	m := NewMemory(func() time.Time { return now })
	ctx := context.Background()
	i := 0
	for b.Loop() {
		m.Take(ctx, "auth:"+strconv.Itoa(i), 1)
		i++
		// 200,000 new keys a window: twice the bound.
		now = now.Add(300 * time.Microsecond)
	}
}
