package gormstore

import (
	"bufio"
	"encoding/binary"
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

// stalledPostgres is a proxy to the Postgres at target that passes each
// connection's start-up and authentication, and drops every statement
// after it (simple or extended query): a server that completes the
// start-up and then stops answering, hung or behind a firewall that drops
// the session part way. Messages as the protocol frames them
// (PostgreSQL documentation, "Message Formats"): the start-up message is
// a length that counts itself and a body; every later one a type byte,
// such a length and a body. Its address; the connections close when t
// ends.
func stalledPostgres(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(cs ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, cs...)
	}
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
			b, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			keep(c, b)
			go func() { _, _ = io.Copy(c, b) }()
			go forwardUntilStatement(c, b)
		}
	}()
	return ln.Addr().String()
}

// forwardUntilStatement copies the client's messages from c to b until
// its first statement, and then drops what the client sends.
func forwardUntilStatement(c, b net.Conn) {
	r := bufio.NewReader(c)
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return
	}
	startup := make([]byte, n)
	copy(startup, size[:])
	if _, err := io.ReadFull(r, startup[4:]); err != nil {
		return
	}
	if _, err := b.Write(startup); err != nil {
		return
	}
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(head[1:])
		if n < 4 || n > 1<<24 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if head[0] == 'Q' || head[0] == 'P' {
			_, _ = io.Copy(io.Discard, r)
			return
		}
		if _, err := b.Write(append(head, body...)); err != nil {
			return
		}
	}
}

// A Postgres that completes the start-up and then gives no answer fails
// Open within the connect bound, with an error that says so and names
// where it connected: Open's first statement took no deadline and held
// migrate, serve's start and admin for good. The bound is lowered here.
func TestOpenGivesUpOnAPostgresThatStopsAnsweringAfterTheStartUp(t *testing.T) {
	base := os.Getenv(pgtest.Env)
	if base == "" {
		t.Skip(pgtest.Env + " is unset: Postgres case skipped")
	}
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = time.Second
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sslmode", "disable") // the proxy reads the protocol in the clear
	u.RawQuery = q.Encode()
	addr := stalledPostgres(t, u.Host)
	u.Host = addr
	began := time.Now()
	err = openWithin(t, u.String(), 10*time.Second)
	if took := time.Since(began); took < connectTimeout {
		t.Errorf("gave up after %v, before the %v bound", took, connectTimeout)
	}
	if msg := err.Error(); !strings.Contains(msg, "connected and then gave no answer within 1s") || !strings.Contains(msg, addr) {
		t.Errorf("%v, want that Postgres at %s gave no answer within 1s", err, addr)
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		t.Errorf("%v shows the password", err)
	}
}
