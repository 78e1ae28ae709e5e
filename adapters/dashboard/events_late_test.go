package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
)

// committedInbox answers Changes as the store does, from the items
// committed so far: created after after newest first, scored after
// scoredAfter newest scoring first, at most limit of each. A test commits
// an item with a time older than ones already committed, as a
// transaction that took its time first and committed last does.
type committedInbox struct {
	fakeInbox
	mu     sync.Mutex
	items  []ports.InboxItem
	polls  int
	asked  []liveCursor  // the cursor of each poll
	polled chan struct{} // a send after each poll; never blocks
}

func (c *committedInbox) commit(it ports.InboxItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = slices.DeleteFunc(c.items, func(x ports.InboxItem) bool { return x.Match.ID == it.Match.ID })
	c.items = append(c.items, it)
}

func (c *committedInbox) Changes(_ context.Context, _ string, _ ports.InboxQuery, after, scoredAfter time.Time, limit int) (created, scored []ports.InboxItem, err error) {
	c.mu.Lock()
	defer func() {
		c.polls++
		c.asked = append(c.asked, liveCursor{after: after, since: scoredAfter})
		c.mu.Unlock()
		select {
		case c.polled <- struct{}{}:
		default:
		}
	}()
	for _, it := range c.items {
		if it.Match.CreatedAt.After(after) {
			created = append(created, it)
		}
		if !it.ScoredAt.IsZero() && it.ScoredAt.After(scoredAfter) {
			scored = append(scored, it)
		}
	}
	slices.SortFunc(created, func(a, b ports.InboxItem) int { return b.Match.CreatedAt.Compare(a.Match.CreatedAt) })
	slices.SortFunc(scored, func(a, b ports.InboxItem) int {
		return cmpOr(b.ScoredAt.Compare(a.ScoredAt), b.Match.CreatedAt.Compare(a.Match.CreatedAt))
	})
	return created[:min(len(created), limit)], scored[:min(len(scored), limit)], nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func (c *committedInbox) pollCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.polls
}

// waitPolls waits until n more polls than now have ended.
func (c *committedInbox) waitPolls(t *testing.T, n int) {
	t.Helper()
	want := c.pollCount() + n
	deadline := time.After(10 * time.Second)
	for c.pollCount() < want {
		select {
		case <-c.polled:
		case <-deadline:
			t.Fatalf("%d polls in 10s, want %d", c.pollCount(), want)
		}
	}
}

// sseEvent is one match event as the page gets it.
type sseEvent struct {
	cursor string // the event's id
	match  string
}

// liveStream reads the events of a stream into a channel, closed at its end.
func liveStream(t *testing.T, srv *httptest.Server, query, lastID string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/app/events?"+query, nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	out := make(chan sseEvent, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var id string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var e liveEvent
				if json.Unmarshal([]byte(v), &e) == nil {
					out <- sseEvent{cursor: id, match: e.ID}
				}
			}
		}
	}()
	return out
}

// until reads events until one for match, and returns them all.
func until(t *testing.T, events <-chan sseEvent, match string) []sseEvent {
	t.Helper()
	var got []sseEvent
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before %s; it sent %v", match, got)
			}
			if got = append(got, e); e.match == match {
				return got
			}
		case <-deadline:
			t.Fatalf("%s was never sent; the stream sent %v", match, got)
		}
	}
}

func at(base time.Time, s int) time.Time { return base.Add(time.Duration(s) * time.Second) }

// A match or a score committed after a poll that saw a later one is sent
// all the same, once; a stream resumed from the last event's id sends it
// too.
func TestLiveSendsLateCommits(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC() // the page's newest match
	s0 := time.Unix(1_800_000_000, 0).UTC() // when the page was made
	inbox, d, srv := committedDashboard(t)
	query := "after=" + strconv.FormatInt(t0.UnixMilli(), 10) + "&since=" + strconv.FormatInt(s0.UnixMicro(), 10)
	events := liveStream(t, srv, query, "")

	m9 := item(9, "acme nine", "ada", "https://x.com/9")
	m9.Match.CreatedAt, m9.ScoredAt = at(t0, 9), at(s0, 9)
	inbox.commit(m9)
	var all []sseEvent
	all = append(all, until(t, events, "m9")...)
	inbox.waitPolls(t, 2) // the cursors stand past m9

	// m8 took its time before m9 and committed after it; m1, a match the
	// page shows, had its score taken before m9's and committed after.
	m8 := item(8, "acme eight", "bo", "https://x.com/8")
	m8.Match.CreatedAt, m8.Match.Score = at(t0, 8), nil
	inbox.commit(m8)
	all = append(all, until(t, events, "m8")...)
	m1 := item(1, "acme one", "cy", "https://x.com/1")
	m1.Match.CreatedAt, m1.ScoredAt = at(t0, -100), at(s0, 8)
	inbox.commit(m1)
	all = append(all, until(t, events, "m1")...)
	inbox.waitPolls(t, 5) // the window answers them all again, skipped

	last := all[len(all)-1].cursor
	c, ok := parseCursor(last)
	if !ok || !c.after.Equal(at(t0, 9).Add(-liveGrace)) || !c.since.Equal(at(s0, 9).Add(-liveGrace)) {
		t.Fatalf("the last event's id %q, want the cursors held %v behind m9's times", last, liveGrace)
	}

	// A reconnect polls from the id as it is, not held back again, and its
	// window still holds the late ones.
	inbox.mu.Lock()
	before := len(inbox.asked)
	inbox.mu.Unlock()
	again := liveStream(t, srv, query, last)
	until(t, again, "m8")
	inbox.mu.Lock()
	for _, a := range inbox.asked[before:] {
		if !a.after.Equal(c.after) || !a.since.Equal(c.since) {
			t.Errorf("a poll after the reconnect asked from %v, want %v", a, c)
		}
	}
	inbox.mu.Unlock()

	d.Close()
	for e := range events {
		all = append(all, e)
	}
	count := map[string]int{}
	for _, e := range all {
		count[e.match]++
	}
	if count["m9"] != 1 || count["m8"] != 1 || count["m1"] != 1 || len(count) != 3 {
		t.Fatalf("sent %v, want m9, m8 and m1 once each", count)
	}
}

// What a stream remembers is bounded: past the cap the oldest sent is
// forgotten (and would be sent again), and what falls behind the cursor
// goes.
func TestLiveSentSetBounded(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	s := newSentSet(3)
	mk := func(i int, scored time.Time) ports.InboxItem {
		it := item(i, "acme", "ada", "https://x.com/1")
		it.Match.CreatedAt, it.ScoredAt = at(t0, i), scored
		return it
	}
	for i := 1; i <= 5; i++ {
		if !s.add(mk(i, time.Time{})) {
			t.Fatalf("m%d counted as sent before", i)
		}
		if s.add(mk(i, time.Time{})) {
			t.Fatalf("m%d sent twice", i)
		}
	}
	if len(s.order) != 3 || len(s.has) != 3 {
		t.Fatalf("%d and %d entries, want 3", len(s.order), len(s.has))
	}
	if !s.add(mk(1, time.Time{})) {
		t.Fatal("m1 still remembered past the cap")
	}
	// Its score is news; then the cursor passes every arrival, not m5's
	// score.
	if !s.add(mk(5, at(t0, 50))) {
		t.Fatal("m5's score taken for its arrival")
	}
	s.forget(liveCursor{after: at(t0, 5), since: at(t0, 49)})
	if len(s.order) != 1 || len(s.has) != 1 || !s.has[keyOf(mk(5, at(t0, 50)))] {
		t.Fatalf("after forget: %v", s.order)
	}
}

// committedDashboard serves a dashboard polling a committedInbox every
// 5 ms; both end with the test, if the test has not closed the
// dashboard itself to end its streams.
func committedDashboard(t *testing.T) (*committedInbox, *Dashboard, *httptest.Server) {
	t.Helper()
	inbox := &committedInbox{polled: make(chan struct{}, 1)}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 5 * time.Millisecond, MaxStreamsPerOwner: 2},
		Deps{Sessions: fakeSessions{}, Inbox: inbox, Matches: fakeMatches{}, Phrases: fakePhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(func() { d.Close(); srv.Close() })
	return inbox, d, srv
}
