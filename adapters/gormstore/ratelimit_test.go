package gormstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// This file is inside the package so that the tests can move the store's
// clock (its gorm NowFunc); testkit/dbtest cannot be imported from here.

// testClock is a clock the tests move by hand. It starts on a whole
// microsecond, as windows are stored in microseconds.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().Truncate(time.Microsecond).UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// limiterURLs are the databases the tests run on: a SQLite file, and
// Postgres when EARSHOT_TEST_POSTGRES_URL names one.
func limiterURLs(t *testing.T) map[string]string {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "rl.db")}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = pgtest.URL(t)
	}
	return urls
}

// openPools opens n pools on url, as n processes would have them, all
// reading time from clock.
func openPools(t *testing.T, url string, n int, clock *testClock) []*DB {
	t.Helper()
	dbs := make([]*DB, n)
	for i := range dbs {
		db, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		db.gorm.NowFunc = clock.now
		dbs[i] = db
	}
	return dbs
}

// storedCount is the count of key's window in the database.
func storedCount(t *testing.T, db *DB, key string) int64 {
	t.Helper()
	var w rateWindowRow
	if err := db.gorm.Take(&w, "key = ?", key).Error; err != nil {
		t.Fatal(err)
	}
	return w.Count
}

func newKey() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "k-" + hex.EncodeToString(b)
}

// Two processes with eight clients each take from one key. Taking until
// every client is refused admits the limit exactly: chunks never grant
// more than is left, and tokens a process holds are used before it
// refuses. Stopping everyone at the first refusal admits at least the
// limit less what the other process may hold unused (under leaseMax).
// Limits under leaseFrom never lease, so both ways admit the limit.
func TestRateLimiterAcrossProcesses(t *testing.T) {
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			dbs := openPools(t, url, 2, newTestClock())
			limiters := []*RateLimiter{NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])}
			for _, limit := range []int{50, 20000} {
				lost := 0
				if limit >= leaseFrom {
					lost = (len(limiters) - 1) * (leaseMax - 1)
				}
				for _, firstRefusal := range []bool{false, true} {
					t.Run(fmt.Sprintf("limit %d, stop at first refusal %v", limit, firstRefusal), func(t *testing.T) {
						key := newKey()
						var admitted, stop atomic.Int64
						var wg sync.WaitGroup
						for _, l := range limiters {
							for range 8 {
								wg.Add(1)
								go func() {
									defer wg.Done()
									for stop.Load() == 0 {
										q, err := l.Take(context.Background(), key, limit)
										if err != nil {
											t.Error(err)
											return
										}
										if !q.Allowed {
											if firstRefusal {
												stop.Store(1)
											}
											return
										}
										admitted.Add(1)
									}
								}()
							}
						}
						wg.Wait()
						n := int(admitted.Load())
						if n > limit || n < limit-lost || !firstRefusal && n != limit {
							t.Fatalf("%d admitted with a limit of %d (may lose %d at the first refusal)", n, limit, lost)
						}
					})
				}
			}
		})
	}
}

// In one process Remaining and Peek count the requests taken, not the
// chunks leased, at every step up to the limit, while another process
// sees the leased chunk counted in the database.
func TestRateLimiterCountsRequestsNotChunks(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			dbs := openPools(t, url, 2, newTestClock())
			l, other := NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])
			const limit = 2000
			key := newKey()
			for i := 1; i <= limit; i++ {
				q, err := l.Take(ctx, key, limit)
				if err != nil || !q.Allowed || q.Remaining != limit-i || q.Reset != rateWindow {
					t.Fatalf("take %d: %+v, %v", i, q, err)
				}
				p, err := l.Peek(ctx, key, limit)
				if err != nil || p.Allowed != (i < limit) || p.Remaining != limit-i {
					t.Fatalf("peek after take %d: %+v, %v", i, p, err)
				}
				if i == 10 {
					// The second take leased a chunk of 19, 1% of the 1,999 left.
					if n := storedCount(t, dbs[1], key); n != 1+19 {
						t.Fatalf("the database counts %d after 10 takes, want 1+19", n)
					}
				}
			}
			if q, err := l.Take(ctx, key, limit); err != nil || q.Allowed || q.Remaining != 0 {
				t.Fatalf("take past the limit: %+v, %v", q, err)
			}
			if p, err := other.Peek(ctx, key, limit); err != nil || p.Allowed {
				t.Fatalf("another process peeks past the limit: %+v, %v", p, err)
			}
		})
	}
}

// Tokens are admitted while their window lasts and dropped when it ends:
// the first take of the next window is counted in the database.
func TestRateLimiterDropsTokensWhenTheWindowEnds(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			clock := newTestClock()
			dbs := openPools(t, url, 2, clock)
			l, other := NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])
			const limit = 100000
			// Ended windows are swept once a window length, from the first
			// take on: the window below ends between two sweeps, so the
			// sweep cannot be what drops its tokens.
			if _, err := l.Take(ctx, newKey(), limit); err != nil {
				t.Fatal(err)
			}
			clock.advance(rateWindow / 2)
			key := newKey()
			for i := 1; i <= 5; i++ {
				if q, err := l.Take(ctx, key, limit); err != nil || !q.Allowed || q.Remaining != limit-i {
					t.Fatalf("take %d: %+v, %v", i, q, err)
				}
			}
			const leased = 1 + 100 // the second take leased 100, the cap
			clock.advance(rateWindow - time.Millisecond)
			q, err := l.Take(ctx, key, limit)
			if err != nil || !q.Allowed || q.Remaining != limit-6 || q.Reset != time.Millisecond {
				t.Fatalf("last take of the window: %+v, %v", q, err)
			}
			if n := storedCount(t, dbs[1], key); n != leased {
				t.Fatalf("the last take of the window came from the chunk, yet the database counts %d", n)
			}
			clock.advance(time.Millisecond)
			q, err = l.Take(ctx, key, limit)
			if err != nil || !q.Allowed || q.Remaining != limit-1 || q.Reset != rateWindow {
				t.Fatalf("first take of the next window: %+v, %v", q, err)
			}
			if q, err := l.Peek(ctx, key, limit); err != nil || q.Remaining != limit-1 || q.Reset != rateWindow {
				t.Fatalf("peek in the next window: %+v, %v", q, err)
			}
			if n := storedCount(t, dbs[1], key); n != 1 {
				t.Fatalf("the database counts %d in the next window, want 1", n)
			}
			if q, err := other.Peek(ctx, key, limit); err != nil || !q.Allowed {
				t.Fatalf("another process peeks in the next window: %+v, %v", q, err)
			}
			l.mu.Lock()
			held := len(l.held)
			l.mu.Unlock()
			clock.advance(rateWindow)
			if _, err := l.Take(ctx, newKey(), limit); err != nil {
				t.Fatal(err)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			if held != 1 || len(l.held) != 1 || l.held[key] != nil {
				t.Fatalf("keys held: %d in the window, %d after it, the ended one still there: %v", held, len(l.held), l.held[key] != nil)
			}
		})
	}
}

// A process that stops getting a key's requests strands the rest of its
// chunk: another process is refused that much before the limit, and the
// first one admits the rest.
func TestRateLimiterStrandedTokens(t *testing.T) {
	ctx := context.Background()
	for name, url := range limiterURLs(t) {
		t.Run(name, func(t *testing.T) {
			dbs := openPools(t, url, 2, newTestClock())
			idle, busy := NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])
			const limit = 20000
			key := newKey()
			for range 2 { // the second leases 100 and holds 99
				if q, err := idle.Take(ctx, key, limit); err != nil || !q.Allowed {
					t.Fatalf("take: %+v, %v", q, err)
				}
			}
			admitted := 0
			for {
				q, err := busy.Take(ctx, key, limit)
				if err != nil {
					t.Fatal(err)
				}
				if !q.Allowed {
					break
				}
				admitted++
			}
			if admitted != limit-2-99 {
				t.Fatalf("the busy process admitted %d, want %d", admitted, limit-2-99)
			}
			if q, err := idle.Peek(ctx, key, limit); err != nil || !q.Allowed {
				t.Fatalf("the idle process peeks with 99 tokens held: %+v, %v", q, err)
			}
			for i := range 99 {
				if q, err := idle.Take(ctx, key, limit); err != nil || !q.Allowed {
					t.Fatalf("held token %d: %+v, %v", i, q, err)
				}
			}
			if q, err := idle.Take(ctx, key, limit); err != nil || q.Allowed {
				t.Fatalf("take past the limit: %+v, %v", q, err)
			}
		})
	}
}

// A lease that fails returns its error, and the next take leases again
// instead of waiting for the failed one.
func TestRateLimiterLeaseFails(t *testing.T) {
	db := openPools(t, "sqlite://"+filepath.Join(t.TempDir(), "rl.db"), 1, newTestClock())[0]
	l := NewRateLimiter(db)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := newKey()
	if q, err := l.Take(ctx, key, 100000); err != nil || !q.Allowed {
		t.Fatalf("first take: %+v, %v", q, err)
	}
	db.Close()
	for i := range 2 {
		if _, err := l.Take(ctx, key, 100000); err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("take %d on a closed database: %v", i, err)
		}
	}
}

// TestPeekWithinKeyTrust: on Postgres, where every request peeks, a
// process answers Peek from a count the database gave it less than
// keyTrust ago, so a window another process uses up is refused here
// within keyTrust.
func TestPeekWithinKeyTrust(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	dbs := openPools(t, pgtest.URL(t), 2, clock)
	a, b := NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])
	const limit = 3
	key := newKey()
	if q, err := a.Peek(ctx, key, limit); err != nil || !q.Allowed || q.Remaining != limit {
		t.Fatalf("peek at a fresh key: %+v, %v", q, err)
	}
	for range limit {
		if q, err := b.Take(ctx, key, limit); err != nil || !q.Allowed {
			t.Fatalf("take: %+v, %v", q, err)
		}
	}
	clock.advance(keyTrust - time.Microsecond)
	if q, err := a.Peek(ctx, key, limit); err != nil || !q.Allowed {
		t.Fatalf("within keyTrust of the last read: %+v, %v; want the count read then", q, err)
	}
	clock.advance(time.Microsecond)
	if q, err := a.Peek(ctx, key, limit); err != nil || q.Allowed || q.Reset != rateWindow-keyTrust {
		t.Fatalf("keyTrust after the last read: %+v, %v; want the window used up", q, err)
	}
}
