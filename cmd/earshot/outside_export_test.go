package main

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An owner's exports run one at a time: while a reader holds one open
// (it reads nothing past the status line, so the server waits to write),
// a second GET of the export is 429 rate_limited with Retry-After in the
// error body, and so is a HEAD, which answers what GET would; another
// owner's export is not held up; once the reader goes away the next
// export runs. HEAD of an idle export is GET's status and headers with
// no body.
func TestOutsideExportOneAtATime(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a, b := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")

	head := s.call("HEAD", "/api/v1/matches/export?format=csv", a.readOnly, nil).want(t, 200, "")
	if len(head.Body) != 0 || !strings.HasPrefix(head.Header.Get("Content-Disposition"), `attachment; filename="earshot-matches-`) ||
		!strings.HasPrefix(head.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("HEAD of the export: %v %q", head.Header, head.Body)
	}
	s.call("HEAD", "/api/v1/matches/export?format=xml", a.readOnly, nil).want(t, 400, "")

	// About 2.4 MB of CSV: more than the server's socket holds for a
	// reader that takes 4 KB at a time, so a reader that stops keeps the
	// export open.
	filler := strings.Repeat("lorem ipsum ", 170)[:1990]
	for batch := range 12 {
		posts := make([]any, 0, 100)
		for i := range 100 {
			posts = append(posts, xPost(fmt.Sprintf("p%d-%d", batch, i), "ada", "acme "+filler))
		}
		s.ingest(a.ingest, "x", posts...)
	}

	conn := slowReader(t, s, "/api/v1/matches/export?format=csv", a.readOnly)
	second := s.call("GET", "/api/v1/matches/export?format=csv", a.full, nil).want(t, 429, "rate_limited")
	if ra, err := strconv.Atoi(second.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("a second export: Retry-After %q", second.Header.Get("Retry-After"))
	}
	if h := s.call("HEAD", "/api/v1/matches/export?format=jsonl", a.readOnly, nil); h.Status != 429 || len(h.Body) != 0 || h.Header.Get("Retry-After") == "" {
		t.Fatalf("HEAD while an export is written: %d %v", h.Status, h.Header)
	}
	other := s.call("GET", "/api/v1/matches/export?format=csv", b.readOnly, nil).want(t, 200, "")
	if string(other.Body) == "" || strings.Count(string(other.Body), "\n") != 1 {
		t.Fatalf("another owner's export: %q", other.Body)
	}

	conn.Close()
	var r response
	waitUntil(t, 30*time.Second, 100*time.Millisecond, func() bool {
		r = s.call("HEAD", "/api/v1/matches/export?format=csv", a.readOnly, nil)
		return r.Status == 200
	}, func() string { return fmt.Sprintf("the export is still held after its reader left: %d", r.Status) })
}

// slowReader sends GET path with key on a connection whose receive
// buffer is as small as the kernel allows, reads the answer's status
// line (200) and then reads nothing more; closing it ends the transfer.
func slowReader(t *testing.T, s *instance, path, key string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", path, key)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("export: %q %v", line, err)
	}
	return conn
}
