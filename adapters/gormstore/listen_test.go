package gormstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// eventually says whether cond comes true within 10 s: another process
// hears of a change from Postgres a moment after it commits. cond is
// asked again each time a listening connection changes what its process
// knows (listenerChanged), which is what every cond here waits on.
func eventually(cond func() bool) bool {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		changed := listenChanges.next()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return cond()
		}
	}
}

// listenChanges tells waiters of every listenerChanged: next returns a
// channel closed at the next change. A waiter takes it before it looks,
// so a change between its look and its wait is not missed.
var listenChanges changes

func init() { listenerChanged = listenChanges.tell }

type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) tell() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// listening says whether db answers from memory (listen.go).
func listening(db *DB) bool {
	_, _, known := db.memory.window("", time.Now())
	return known
}

// unannounced runs q on db with the triggers off for its transaction, a
// change Postgres does not announce: a process that still answers as
// before the change answers from memory.
func unannounced(t *testing.T, db *DB, q string, args ...any) {
	t.Helper()
	if err := db.gorm.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		return tx.Exec(q, args...).Error
	}); err != nil {
		t.Fatal(err)
	}
}

// testOwner stores an owner of email on db.
func testOwner(t *testing.T, db *DB, email string) core.Owner {
	t.Helper()
	o, err := core.NewOwner(email, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewOwnerStore(db).CreateOwner(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestPeekFollowsOtherProcesses runs two processes' pools on one
// Postgres schema. Once a process listens, it answers Peek from memory;
// a window another process uses up is refused once Postgres has said
// so; and a window used up while a process was not listening is known
// to it when it listens again.
func TestPeekFollowsOtherProcesses(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	dbs := openPools(t, url, 2, newTestClock())
	a, b := NewRateLimiter(dbs[0]), NewRateLimiter(dbs[1])
	const limit = 3
	peekUntil := func(what, key string, allowed bool) {
		t.Helper()
		var q ports.Quota
		var err error
		if !eventually(func() bool {
			q, err = a.Peek(ctx, key, limit)
			return err == nil && q.Allowed == allowed && (allowed || (q.Reset > 0 && q.Reset <= rateWindow))
		}) {
			t.Fatalf("%s: peek answers %+v, %v", what, q, err)
		}
	}

	quiet := newKey()
	peekUntil("a fresh key", quiet, true)
	if !eventually(func() bool { return listening(dbs[0]) }) {
		t.Fatal("a does not listen")
	}
	// A used-up window Postgres did not announce: a answers from memory.
	now := micros(dbs[1].gorm.NowFunc())
	unannounced(t, dbs[1], "INSERT INTO rate_windows (key, started, count, lim) VALUES (?, ?, 10, 3)", quiet, now)
	if q, err := a.Peek(ctx, quiet, limit); err != nil || !q.Allowed {
		t.Fatalf("peek read the database rather than memory: %+v, %v", q, err)
	}

	used := newKey()
	for range limit {
		if q, err := b.Take(ctx, used, limit); err != nil || !q.Allowed {
			t.Fatalf("take: %+v, %v", q, err)
		}
	}
	peekUntil("used up by another process", used, false)

	// Cut a's connection; b uses up a window meanwhile; a knows it once
	// it listens again, from what it reads when it does.
	pid := dbs[0].listener.pid.Load()
	if err := dbs[1].gorm.Exec("SELECT pg_terminate_backend(?)", int64(pid)).Error; err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return !listening(dbs[0]) }) {
		t.Fatal("a still listens after its connection was cut")
	}
	missed := newKey()
	for range limit {
		if _, err := b.Take(ctx, missed, limit); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(func() bool { return dbs[0].listener.pid.Load() != pid && listening(dbs[0]) }) {
		t.Fatal("a does not listen again")
	}
	unannounced(t, dbs[1], "UPDATE rate_windows SET count = 0 WHERE key = ?", missed)
	if q, err := a.Peek(ctx, missed, limit); err != nil || q.Allowed {
		t.Fatalf("a window used up while a was not listening: %+v, %v", q, err)
	}
}
