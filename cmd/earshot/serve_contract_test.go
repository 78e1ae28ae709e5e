package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first start prints an API key with every scope, an ingest key and
// a curl line that works as printed, on stdout and nowhere else.
func TestBootstrapKeysWorkAsPrinted(t *testing.T) {
	t.Parallel()
	s := start(t)
	if s.APIKey == "" {
		t.Fatalf("no bootstrap keys:\n%s", s.stdout)
	}
	list := s.mustAdmin("key", "list", "--owner", s.OwnerID)
	if rows := strings.Split(list, "\n"); len(rows) != 2 || !strings.Contains(rows[1], " read,write:phrases,webhooks ") {
		t.Fatalf("the bootstrap API key's scopes:\n%s", list)
	}
	s.call("GET", "/phrases?platform=reddit", s.IngestKey, nil).want(t, 200, "")
	curl := regexp.MustCompile(`(?m)^  curl -H "Authorization: Bearer (\S+)" (\S+)$`).FindStringSubmatch(s.stdout.String())
	if curl == nil || curl[1] != s.APIKey || curl[2] != s.URL+"/api/v1/me" {
		t.Fatalf("curl line in:\n%s\nwant the key and %s/api/v1/me", s.stdout, s.URL)
	}
	req, _ := http.NewRequest("GET", curl[2], nil)
	req.Header.Set("Authorization", "Bearer "+curl[1])
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the printed curl line answers %d", resp.StatusCode)
	}
}

// The bootstrap is for a database with no owner: one made with the
// console before the first start gets no keys printed.
func TestNoBootstrapOnADatabaseWithAnOwner(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	if _, err := runEarshot(env, "admin", "owner", "create", "--email", "first@example.com"); err != nil {
		t.Fatal(err)
	}
	s := &instance{t: t, env: env}
	s.launch()
	t.Cleanup(s.stop)
	if s.stdout.String() != "" || !strings.Contains(s.logs.String(), `"msg":"bootstrap skipped","reason":"the database has an owner"`) {
		t.Fatalf("stdout:\n%s\nlogs:\n%s", s.stdout, s.logs)
	}
}

// SIGINT stops serve as SIGTERM does: the stop is logged with the signal
// and the exit status is 0.
func TestServeStopsOnSIGINT(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false")
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v on SIGINT; logs:\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s of SIGINT")
	}
	if !s.waitOutput(5*time.Second, func(_, logs string) bool { return strings.Contains(logs, `"msg":"stopping","signal":"interrupt"`) }) {
		t.Fatalf("no stop line:\n%s", s.logs)
	}
}

// A database that cannot be reached is said on one line by every command
// that opens it, also for a Postgres URL without sslmode, where the
// driver tries twice (with TLS, then without) and words each try on a
// line of its own: a log collector reading stderr line by line gets the
// whole cause with its "earshot:" prefix, and never the password.
func TestUnreachableDatabaseOnOneLine(t *testing.T) {
	t.Parallel()
	const password = "s3cret-pw"
	addr := closedPort(t)
	env := append(baseEnv(t.TempDir()), "EARSHOT_SECRET_KEY="+strings.Repeat("k", 32),
		"EARSHOT_DATABASE_URL=postgres://earshot:"+password+"@"+addr+"/earshot")
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"admin", "owner", "list"}} {
		_, err := runEarshot(env, cmd...)
		var re *runError
		if !errors.As(err, &re) || re.code != 1 {
			t.Fatalf("%v: %v, want exit status 1", cmd, err)
		}
		if !strings.HasPrefix(re.stderr, "earshot: open database: ") || strings.Count(re.stderr, "\n") != 1 ||
			!strings.Contains(re.stderr, addr) || strings.Contains(re.stderr, password) {
			t.Errorf("%v: stderr %q, want one line, earshot: open database: ... naming %s", cmd, re.stderr, addr)
		}
	}
}

// A Postgres that accepts the connection and never answers fails every
// command that opens it within the connect bound (lowered here by the
// URL's connect_timeout), with status 1 and one line that says it timed
// out, though the driver words its TLS and plain tries on lines of their
// own.
func TestSilentDatabaseOnOneLine(t *testing.T) {
	t.Parallel()
	const password = "s3cret-pw"
	peer := silentPeer(t)
	env := append(baseEnv(t.TempDir()), "EARSHOT_SECRET_KEY="+strings.Repeat("k", 32),
		"EARSHOT_DATABASE_URL=postgres://earshot:"+password+"@"+peer.addr+"/earshot?connect_timeout=2")
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"admin", "owner", "list"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := exec.CommandContext(ctx, binary, cmd...)
		c.Env = env
		var stderr bytes.Buffer
		c.Stderr = &stderr
		err := c.Run()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("%v still runs 20 s after connecting to a Postgres that never answers", cmd)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%v: %v, want exit status 1", cmd, err)
		}
		if msg := stderr.String(); !strings.HasPrefix(msg, "earshot: open database: ") || strings.Count(msg, "\n") != 1 ||
			!strings.Contains(msg, peer.addr) || !strings.Contains(msg, "timeout") || strings.Contains(msg, password) {
			t.Errorf("%v: stderr %q, want one line, earshot: open database: ... timeout, naming %s", cmd, msg, peer.addr)
		}
	}
}

// On SIGTERM a request still in flight when its share of the stop's time
// ends (here a body that never arrives) is closed and said so, and serve
// still exits 0 within 30 s.
func TestStopClosesRequestsStillInFlight(t *testing.T) {
	t.Parallel()
	s := start(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+s.IngestKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"platform\""); err != nil {
		t.Fatal(err)
	}
	// The hung request is in flight once the key's rate limit counted it:
	// the remaining count falls by one more than the asks made here.
	asks := 0
	waitUntil(t, 10*time.Second, 20*time.Millisecond, func() bool {
		r := s.call("GET", "/phrases?platform=x", s.IngestKey, nil).want(t, 200, "")
		asks++
		limit, _ := strconv.Atoi(r.Header.Get("X-Ratelimit-Limit"))
		left, _ := strconv.Atoi(r.Header.Get("X-Ratelimit-Remaining"))
		return limit-left == asks+1
	}, func() string { return "the hung request was never counted" })

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v; logs:\n%s", err, s.logs)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop within 30 s of SIGTERM")
	}
	if !s.waitOutput(5*time.Second, func(_, logs string) bool {
		return strings.Contains(logs, `"msg":"stopping: closing the connections of requests still in flight"`)
	}) {
		t.Fatalf("no line about the requests closed:\n%s", s.logs)
	}
	// Closed, not answered.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(conn); len(b) != 0 {
		t.Fatalf("the hung request was answered: %q", b)
	}
}
