package gormstore

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// openWriters opens a SQLite file with driver and a table to write to.
// busyMillis is the busy timeout: 0 turns SQLite's waiting off, so a
// transaction that finds another writing fails at once.
func openWriters(tb testing.TB, driver string, busyMillis int) *sql.DB {
	tb.Helper()
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_busy_timeout=%d",
		filepath.Join(tb.TempDir(), "w.db"), busyMillis)
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(8)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		tb.Fatal(err)
	}
	return db
}

// writeTx makes one short write transaction.
func writeTx(db *sql.DB, v string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec("INSERT INTO t (v) VALUES (?)", v); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Transactions of one process wait for each other on the mutex, never in
// SQLite: with SQLite's own waiting turned off, none is refused as busy.
func TestSQLiteTransactionsQueueInProcess(t *testing.T) {
	db := openWriters(t, lockingDriverName, 0)
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := writeTx(db, fmt.Sprint(g, i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a transaction failed: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != goroutines*each {
		t.Fatalf("%d rows, %v; want %d", n, err, goroutines*each)
	}
	// A rolled-back transaction releases the mutex too.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	done := make(chan error, 1)
	go func() { done <- writeTx(db, "after rollback") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a transaction after a rollback never started")
	}
}

// BenchmarkConcurrentWriteTx compares short write transactions from 8
// goroutines queued on the mutex with the same through SQLite's busy
// handler (the plain driver, a 10 s busy timeout as Open sets it), and
// reports the wait of each transaction as well as the rate: the busy
// handler's sleeps do not show in the rate, since some writer always
// holds the lock, but in the tail of the waits.
//
//	go test -run '^$' -bench ConcurrentWriteTx ./adapters/gormstore
func BenchmarkConcurrentWriteTx(b *testing.B) {
	for _, c := range []struct{ name, driver string }{{"busy-handler", "sqlite3"}, {"mutex", lockingDriverName}} {
		b.Run(c.name, func(b *testing.B) {
			db := openWriters(b, c.driver, 10000)
			var mu sync.Mutex
			var waits []time.Duration
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					start := time.Now()
					if err := writeTx(db, "x"); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(start))
				}
				mu.Lock()
				waits = append(waits, mine...)
				mu.Unlock()
			})
			b.StopTimer()
			slices.Sort(waits)
			if len(waits) > 0 {
				b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(waits[len(waits)-1].Microseconds())/1000, "max-ms")
			}
		})
	}
}
