package gormstore

import (
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// silentPostgres accepts connections and never writes: a Postgres whose
// port is open and whose process is hung (or a firewall that completes
// the handshake and drops what follows). Its address; the connections
// close when t ends.
func silentPostgres(t *testing.T) string {
	t.Helper()
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
			// Read what the client sends, so it is held by the missing
			// answer and not by a full buffer.
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return ln.Addr().String()
}

// openWithin runs Open(rawURL) and fails t unless it returns an error
// within bound; the error.
func openWithin(t *testing.T, rawURL string, bound time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		db, err := Open(rawURL)
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Open succeeded against a peer that never answers")
		}
		return err
	case <-time.After(bound):
		t.Fatalf("Open still waits %v after connecting to a peer that never answers", bound)
		return nil
	}
}

// A Postgres that accepts the connection and never answers fails Open
// within the connect bound, with an error that says it timed out, also
// when the URL has no sslmode and the driver tries twice (TLS, then
// without). The bound is lowered here; it is whole seconds, as
// connect_timeout is.
func TestOpenGivesUpOnASilentPostgres(t *testing.T) {
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = time.Second
	addr := silentPostgres(t)
	for _, q := range []string{"", "?sslmode=disable"} {
		err := openWithin(t, "postgres://earshot:s3cret-pw@"+addr+"/earshot"+q, 10*time.Second)
		if !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("%q: %v, want a timeout naming %s", q, err, addr)
		}
	}
}

// The URL's own connect_timeout wins over the default bound.
func TestOpenKeepsTheURLsConnectTimeout(t *testing.T) {
	t.Parallel()
	addr := silentPostgres(t)
	// Well under the default of 30 s: Open gave up on the URL's 1 s.
	err := openWithin(t, "postgres://earshot@"+addr+"/earshot?sslmode=disable&connect_timeout=1", 10*time.Second)
	if !strings.Contains(err.Error(), "timeout") {
		t.Errorf("%v, want a timeout", err)
	}
}

// So does PGCONNECT_TIMEOUT, the driver's (and libpq's) setting for it.
func TestOpenKeepsPGCONNECT_TIMEOUT(t *testing.T) {
	t.Setenv("PGCONNECT_TIMEOUT", "1")
	addr := silentPostgres(t)
	err := openWithin(t, "postgres://earshot@"+addr+"/earshot?sslmode=disable", 10*time.Second)
	if !strings.Contains(err.Error(), "timeout") {
		t.Errorf("%v, want a timeout", err)
	}
}

// Only the connect is bounded: a statement that runs longer than the
// connect bound, as a long migration's may, is not cut short.
func TestConnectBoundLeavesStatementsAlone(t *testing.T) {
	base := os.Getenv(pgtest.Env)
	if base == "" {
		t.Skip(pgtest.Env + " is unset: Postgres case skipped")
	}
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = time.Second
	db, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.plain.Exec("SELECT pg_sleep(2)").Error; err != nil {
		t.Fatalf("a 2 s statement under a 1 s connect bound: %v", err)
	}
}

// A URL the driver cannot parse is shown as the operator wrote it
// (password masked): not with the parameters Open adds.
func TestOpenShowsTheURLAsWritten(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"postgres://u:pw-secret@127.0.0.1/db?sslmode=bogus",
		"postgresql://u:pw-secret@127.0.0.1/db?connect_timeout=soon",
		"postgres://u:pw-secret@127.0.0.1/db?plan_cache_mode=auto&sslmode=bogus",
	} {
		_, err := Open(raw)
		if err == nil {
			t.Fatalf("%s: Open succeeded", raw)
		}
		u, _ := url.Parse(raw)
		u.User = url.UserPassword("u", "xxxxx")
		if msg := err.Error(); !strings.Contains(msg, "`"+u.String()+"`") || strings.Contains(msg, "pw-secret") {
			t.Errorf("%s: %v, want the URL as written, password masked", raw, msg)
		}
	}
}
