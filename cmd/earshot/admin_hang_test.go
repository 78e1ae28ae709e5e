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
	stalledRuns(t, map[string]stalledRun{
		"after the start-up": {args: []string{"admin", "owner", "list"}, stall: func(typ byte, _ []byte) bool { return typ == 'Q' || typ == 'P' }},
		// The schema is current: the first statement naming its table
		// reads its version, and no migration follows.
		"on the read of the schema's version": {args: []string{"admin", "owner", "list"},
			stall: func(_ byte, body []byte) bool { return bytes.Contains(body, []byte("schema_migrations")) }},
		// The schema is current, so the first statement naming owners
		// is owner list's.
		"on the command's statement": {args: []string{"admin", "owner", "list"},
			stall: func(_ byte, body []byte) bool { return bytes.Contains(body, []byte("owners")) }},
	}, adminBound, adminBound+30*time.Second, func(t *testing.T, r stalledRun, stderr string) {
		if !strings.HasPrefix(stderr, "earshot: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no answer within "+adminBound.String()) {
			t.Errorf("stderr %q, want one line, earshot: ... no answer within %v", stderr, adminBound)
		}
	})
}

// stalledRun is a command of the binary run against a migrated database
// through stallingPostgres with stall.
type stalledRun struct {
	args  []string
	stall func(typ byte, body []byte) bool
}

// stalledRuns starts every run at once, each on a database of its own
// behind its own stalling proxy, so their waits for the bound overlap,
// then checks each: it ends within ceiling, not before bound, with status
// 1, nothing on stdout and a statement dropped; check reads its stderr.
func stalledRuns(t *testing.T, runs map[string]stalledRun, bound, ceiling time.Duration, check func(t *testing.T, r stalledRun, stderr string)) {
	t.Helper()
	type started struct {
		run            stalledRun
		cmd            *exec.Cmd
		proxy          *peer
		stdout, stderr bytes.Buffer
		began          time.Time
	}
	ctx, cancel := context.WithTimeout(context.Background(), ceiling)
	defer cancel()
	all := map[string]*started{}
	for name, r := range runs {
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
		s := &started{run: r, proxy: stallingPostgres(t, u.Host, r.stall)}
		u.Host = s.proxy.addr
		s.cmd = exec.CommandContext(ctx, binary, r.args...)
		s.cmd.Env = append(env, "EARSHOT_DATABASE_URL="+u.String())
		s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
		all[name] = s
	}
	for _, s := range all {
		s.began = time.Now()
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range all {
		t.Run(name, func(t *testing.T) {
			err := s.cmd.Wait()
			took := time.Since(s.began)
			t.Logf("%s: exit after %v: %s", strings.Join(s.run.args, " "), took.Round(time.Millisecond), s.stderr.String())
			if ctx.Err() != nil {
				t.Fatalf("%s still runs %v after Postgres stopped answering; stderr:\n%s", s.run.args[0], ceiling, s.stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("%v, want exit status 1; stderr:\n%s", err, s.stderr.String())
			}
			if took < bound {
				t.Errorf("gave up after %v, before the %v bound", took, bound)
			}
			check(t, s.run, s.stderr.String())
			select {
			case <-s.proxy.held:
			default:
				t.Error("the proxy never dropped a statement")
			}
			if s.stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", s.stdout.String())
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
