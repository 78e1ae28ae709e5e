package gormstore

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"
)

// A statement outside a transaction may wait for a connection while
// gorm prepares it; the same statement inside a transaction that holds
// the only connection must not wait for that preparation.
func TestTransactionDoesNotWaitForThePool(t *testing.T) {
	db := openMigrated(t, "sqlite://:memory:")
	const q = "SELECT COUNT(*) FROM owners"
	ctx := context.Background()
	done := make(chan error, 2)
	go func() {
		done <- db.with(ctx).Transaction(func(tx *gorm.DB) error {
			outside := make(chan error, 1)
			go func() {
				var n int64
				outside <- db.with(ctx).Raw(q).Scan(&n).Error // waits for the connection this transaction holds
			}()
			for !slices.Contains(preparing(db), q) {
				select {
				case err := <-outside:
					return err
				default:
					runtime.Gosched()
				}
			}
			var n int64
			err := tx.Raw(q).Scan(&n).Error
			go func() { done <- <-outside }()
			return err
		})
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the transaction and the statement outside it wait for each other")
		}
	}
}

// preparing lists the statements gorm has prepared or is preparing.
func preparing(db *DB) []string {
	switch p := db.gorm.Statement.ConnPool.(type) {
	case preparedPool:
		return p.Stmts.Keys()
	case *gorm.PreparedStmtDB:
		return p.Stmts.Keys()
	}
	return nil
}

// openMigrated opens url at the latest schema, closed when t ends.
func openMigrated(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// openAt opens url at schema version, as a build that ran migrations 1
// to version left it, closed when t ends.
func openAt(t *testing.T, url string, version int) *DB {
	t.Helper()
	db, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.migrate(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}

// A read after the database is closed, as the backlog watcher's last
// tick can be while the server stops, is an error, not a panic.
func TestUnscoredOnClosedDatabase(t *testing.T) {
	db := openMigrated(t, "sqlite://:memory:")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMatchStore(db).Unscored(context.Background(), 10); err == nil {
		t.Fatal("Unscored on a closed database: no error")
	}
}
