package server

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync"
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

// A server that accepts the connection and never answers its start-up
// (a hung process, or a firewall that answers the handshake and drops
// what follows) fails the console's open within gormstore.Open's
// connect bound, 30 s, when the URL names none, whatever the console's
// own bound: a connect given no bound waits for good.
func TestConsoleCheckConnectsWithinTheDefaultBound(t *testing.T) {
	t.Parallel()
	if os.Getenv("PGCONNECT_TIMEOUT") != "" {
		t.Skip("PGCONNECT_TIMEOUT sets the bound")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			// Read what the client sends, so that it waits for the
			// answer, not for room to write.
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	cfg := testConfig(t, map[string]string{
		"EARSHOT_DATABASE_URL": "postgres://earshot@" + ln.Addr().String() + "/earshot?sslmode=disable",
		"EARSHOT_SECRET_KEY":   strings.Repeat("k", 32),
	})
	done := make(chan error, 1)
	go func() {
		con, err := OpenConsole(context.Background(), cfg, time.Second)
		if err == nil {
			err = con.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("OpenConsole on a server that never answers = %v, want a timeout", err)
		}
	case <-time.After(45 * time.Second):
		t.Fatal("the console's open still waits 45 s on a server that never answers its start-up")
	}
}
