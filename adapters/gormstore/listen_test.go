package gormstore

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

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
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			q, err := a.Peek(ctx, key, limit)
			if err == nil && q.Allowed == allowed && (allowed || (q.Reset > 0 && q.Reset <= rateWindow)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: peek answers %+v, %v", what, q, err)
			}
		}
	}
	listening := func(db *DB) bool {
		_, _, known := db.windows.lookup("", db.gorm.NowFunc())
		return known
	}
	// sneak changes rate_windows without the triggers, as Postgres
	// would not announce it.
	sneak := func(q string, args ...any) {
		t.Helper()
		tx, err := dbs[1].SQL().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec("SET LOCAL session_replication_role = replica"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	quiet := newKey()
	peekUntil("a fresh key", quiet, true)
	for deadline := time.Now().Add(10 * time.Second); !listening(dbs[0]); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a does not listen")
		}
	}
	// A used-up window Postgres did not announce: a answers from memory.
	now := micros(dbs[1].gorm.NowFunc())
	sneak("INSERT INTO rate_windows (key, started, count, lim) VALUES ($1, $2, 10, 3)", quiet, now)
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
	if _, err := dbs[1].SQL().ExecContext(ctx, "SELECT pg_terminate_backend($1)", int64(pid)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); listening(dbs[0]); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a still listens after its connection was cut")
		}
	}
	missed := newKey()
	for range limit {
		if _, err := b.Take(ctx, missed, limit); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); dbs[0].listener.pid.Load() == pid || !listening(dbs[0]); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a does not listen again")
		}
	}
	sneak("UPDATE rate_windows SET count = 0 WHERE key = $1", missed)
	if q, err := a.Peek(ctx, missed, limit); err != nil || q.Allowed {
		t.Fatalf("a window used up while a was not listening: %+v, %v", q, err)
	}
}
