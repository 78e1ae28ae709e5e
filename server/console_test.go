package server

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// The console's bound is for short statements: a pending migration runs
// past it, here waiting for the migration lock that another process
// holds (as a replica's start that is migrating does), and then
// succeeds.
func TestConsoleLeavesAPendingMigrationUncut(t *testing.T) {
	dbURL := pgtest.URL(t) // a fresh schema: every step is pending
	holder, err := gorm.Open(postgres.Open(os.Getenv(pgtest.Env)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := holder.DB(); err == nil {
		defer sqlDB.Close()
	}
	tx := holder.Begin()
	defer tx.Rollback()
	// The key every earshot process takes to migrate (gormstore).
	if err := tx.Exec("SELECT pg_advisory_xact_lock(8442201)").Error; err != nil {
		t.Fatal(err)
	}

	const bound = 500 * time.Millisecond
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": dbURL, "EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	done := make(chan error, 1)
	go func() {
		con, err := OpenConsole(context.Background(), cfg, bound)
		if err == nil {
			err = con.Close()
		}
		done <- err
	}()
	waiting := func() bool {
		var n int
		holder.Raw("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 8442201 AND NOT granted").Scan(&n)
		return n > 0
	}
	for deadline := time.Now().Add(30 * time.Second); !waiting(); {
		select {
		case err := <-done:
			t.Fatalf("OpenConsole returned before waiting for the migration lock: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("OpenConsole never waited for the migration lock")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("OpenConsole returned while the migration waited for its lock: %v", err)
	case <-time.After(4 * bound):
	}
	tx.Rollback()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("OpenConsole after the lock was released: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("OpenConsole still waits 30 s after the migration lock was released")
	}
}
