// Package dbtest opens earshot's database for a test: any store URL,
// migrated, and closed when the test ends. Tests that need a store of
// their own use it instead of repeating the open, migrate and close.
package dbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
)

// Open opens and migrates the database at url (sqlite://... or
// postgres://...) and closes it when t ends.
func Open(t testing.TB, url string) *gormstore.DB {
	t.Helper()
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// Memory is Open on a new SQLite database in memory.
func Memory(t testing.TB) *gormstore.DB { return Open(t, "sqlite://:memory:") }

// File is Open on a new SQLite file in t's temporary folder, for tests and
// benchmarks that need SQLite's file behaviour (WAL, several connections).
func File(t testing.TB) *gormstore.DB {
	return Open(t, "sqlite://"+filepath.Join(t.TempDir(), "earshot.db"))
}
