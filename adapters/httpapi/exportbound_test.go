package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"

	"github.com/earshothq/earshot/ports"
)

// An owner's exports run one at a time in a process, as the dashboard's
// do: a key that starts exports faster than it reads them (each is one
// request of the rate limit, and a reader taking up to exportWriteWait a
// page keeps one open for as long as it likes) would otherwise hold a
// goroutine, a page and a database read for each. A second export while
// the first is written is 429 with Retry-After; once it ends, the next
// runs.
func TestExportOneAtATimePerOwner(t *testing.T) {
	var got ports.MatchQuery
	next := make(chan struct{})
	srv := exportAPI(t, pagedMatches{pages: exportPages(2, 3), next: next, got: &got}, unlimited{})
	// Before the server closes, which waits for the exports under way.
	t.Cleanup(func() {
		select {
		case <-next:
		default:
			close(next)
		}
	})
	first := getExport(t, srv, "format=jsonl")
	r := bufio.NewReader(first.Body)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("the first export's first line: %v", err)
	}

	second := getExport(t, srv, "format=jsonl")
	var body errorBody
	if err := json.NewDecoder(second.Body).Decode(&body); err != nil || second.StatusCode != 429 ||
		body.Error.Code != "rate_limited" || second.Header.Get("Retry-After") == "" {
		t.Fatalf("a second export while the first runs: %d %+v Retry-After %q, %v; want 429 rate_limited",
			second.StatusCode, body, second.Header.Get("Retry-After"), err)
	}

	close(next)
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	// The slot is freed before the handler returns, so before the
	// transfer's last chunk reaches the client.
	third := getExport(t, srv, "format=jsonl")
	if n, _ := io.Copy(io.Discard, third.Body); third.StatusCode != 200 || n == 0 {
		t.Fatalf("an export after the first ended: status %d, %d bytes", third.StatusCode, n)
	}
}
