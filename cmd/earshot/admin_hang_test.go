package main

import (
	"bufio"
	"bytes"
	"context"
	be "encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// A Postgres that completes the start-up and then stops answering (hung,
// or a firewall that drops what follows) ends an admin command within
// its bound, with status 1 and one line saying so, wherever the command
// was: the first statement after connecting, or the command's own.
func TestAdminGivesUpOnAPostgresThatStopsAnswering(t *testing.T) {
	t.Parallel()
	for name, stall := range map[string]func(typ byte, body []byte) bool{
		"after the start-up": func(typ byte, _ []byte) bool { return typ == 'Q' || typ == 'P' },
		// The schema is current: the first statement naming its table
		// reads its version, and no migration follows.
		"on the read of the schema's version": func(_ byte, body []byte) bool { return bytes.Contains(body, []byte("schema_migrations")) },
		// The schema is current, so the first statement naming owners
		// is owner list's.
		"on the command's statement": func(_ byte, body []byte) bool { return bytes.Contains(body, []byte("owners")) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			direct := pgtest.URL(t)
			env := append(baseEnv(t.TempDir()), "EARSHOT_SECRET_KEY="+strings.Repeat("k", 32))
			if _, err := runEarshot(append(env, "EARSHOT_DATABASE_URL="+direct), "migrate"); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(direct)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("sslmode", "disable") // the proxy reads the protocol in the clear
			u.RawQuery = q.Encode()
			proxy := stallingPostgres(t, u.Host, stall)
			u.Host = proxy.addr

			ceiling := adminBound + 30*time.Second
			ctx, cancel := context.WithTimeout(context.Background(), ceiling)
			defer cancel()
			c := exec.CommandContext(ctx, binary, "admin", "owner", "list")
			c.Env = append(env, "EARSHOT_DATABASE_URL="+u.String())
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			began := time.Now()
			err = c.Run()
			took := time.Since(began)
			t.Logf("exit after %v: %s", took.Round(time.Millisecond), stderr.String())
			if ctx.Err() != nil {
				t.Fatalf("admin owner list still runs %v after Postgres stopped answering; stderr:\n%s", ceiling, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("%v, want exit status 1; stderr:\n%s", err, stderr.String())
			}
			if took < adminBound {
				t.Errorf("gave up after %v, before the %v bound", took, adminBound)
			}
			msg := stderr.String()
			if !strings.HasPrefix(msg, "earshot: ") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "no answer within "+adminBound.String()) {
				t.Errorf("stderr %q, want one line, earshot: ... no answer within %v", msg, adminBound)
			}
			select {
			case <-proxy.held:
			default:
				t.Error("the proxy never dropped a statement")
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// stallingPostgres is a proxy to the Postgres at target that passes each
// connection's start-up, and then the client's messages until one that
// stall picks: that one and all after it are dropped, so the server never
// sees the statement and the client waits for an answer that never
// comes. Messages as the protocol frames them (PostgreSQL documentation,
// "Message Formats"): the start-up message is a length that counts
// itself and a body; every later one a type byte, such a length and a
// body.
func stallingPostgres(t *testing.T, target string, stall func(typ byte, body []byte) bool) *peer {
	t.Helper()
	return proxyPeer(t, target, func(p *peer, c, b net.Conn) { p.forwardPostgresUntil(c, b, stall) })
}

// forwardPostgresUntil copies the client's messages from c to b until
// stall picks one; it then drops what the client sends.
func (p *peer) forwardPostgresUntil(c, b net.Conn, stall func(typ byte, body []byte) bool) {
	r := bufio.NewReader(c)
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return
	}
	n := be.BigEndian.Uint32(size[:])
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
		n := be.BigEndian.Uint32(head[1:])
		if n < 4 || n > 1<<24 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if stall(head[0], body) {
			p.hold()
			_, _ = io.Copy(io.Discard, r)
			return
		}
		if _, err := b.Write(append(head, body...)); err != nil {
			return
		}
	}
}
