package dashboard

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
)

// liveInbox answers the first poll with one new match, then nothing.
type liveInbox struct {
	fakeInbox
	polls  atomic.Int32
	after  atomic.Value  // the after of the last poll
	polled chan struct{} // a send after each poll; never blocks
}

func (l *liveInbox) Changes(_ context.Context, _ string, _ ports.InboxQuery, after, _ time.Time, _ int) ([]ports.InboxItem, []ports.InboxItem, error) {
	l.after.Store(after)
	defer func() {
		select {
		case l.polled <- struct{}{}:
		default:
		}
	}()
	if l.polls.Add(1) == 1 {
		return []ports.InboxItem{item(7, "<b>live</b> acme", "eve", "https://x.com/7")}, nil, nil
	}
	return nil, nil, nil
}

func TestEvents(t *testing.T) {
	inbox := &liveInbox{polled: make(chan struct{}, 1)}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 10 * time.Millisecond, MaxStreamsPerOwner: 1},
		Deps{Sessions: fakeSessions{}, Inbox: inbox, Matches: fakeMatches{}, Phrases: fakePhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	defer srv.Close()
	open := func() *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+"/app/events?after=1700000000000&since=1", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := open()
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			id = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
			break
		}
	}
	if !strings.Contains(data, `"id":"m7"`) || !strings.Contains(data, `\u0026lt;b\u0026gt;live`) || strings.Contains(data, "<b>") {
		t.Fatalf("event data %s", data)
	}
	// The id holds the cursor back by the grace window behind m7.
	if c, ok := parseCursor(id); !ok || !c.after.Equal(time.Unix(1_700_000_007, 0).Add(-liveGrace)) {
		t.Fatalf("event id %q", id)
	}
	// One stream per owner here: a second is refused, the page still works.
	if second := open(); second.StatusCode != 503 {
		t.Fatalf("second stream: %d", second.StatusCode)
	} else {
		second.Body.Close()
	}
	// The cursor moved on: the next polls ask for what came after m7, less
	// the grace window.
	deadline := time.After(5 * time.Second)
	for inbox.polls.Load() < 3 {
		select {
		case <-inbox.polled:
		case <-deadline:
			t.Fatalf("%d polls in 5s, want 3", inbox.polls.Load())
		}
	}
	if a, _ := inbox.after.Load().(time.Time); !a.Equal(time.Unix(1_700_000_007, 0).Add(-liveGrace)) {
		t.Fatalf("later polls ask after %v", a)
	}
	// Closing the dashboard ends the stream.
	d.Close()
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, resp.Body); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream outlived Close")
	}
}
