package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// liveBatch bounds what one poll sends: a burst larger than this shows
// its newest matches live and the rest on the next page load.
const liveBatch = 25

// heartbeat is how long a quiet stream waits before writing a comment,
// so a browser that went away is noticed and its slot freed.
const heartbeat = 15 * time.Second

// recheck is how often a stream checks that its session still stands,
// so signing out (everywhere) also ends the streams already open.
const recheck = 30 * time.Second

// acquire takes a live-connection slot for the owner; false when the
// process or the owner has as many as allowed, or the dashboard closed.
func (d *Dashboard) acquire(owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.streams >= d.cfg.MaxStreams || d.byOwner[owner] >= d.cfg.MaxStreamsPerOwner {
		return false
	}
	d.streams++
	d.byOwner[owner]++
	return true
}

func (d *Dashboard) release(owner string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.streams--
	if d.byOwner[owner]--; d.byOwner[owner] <= 0 {
		delete(d.byOwner, owner)
	}
}

// liveCursor is where a live view stands: the newest match it shows and
// the last scoring it saw. It travels as the SSE event id, so a browser
// that reconnects resumes where it was.
type liveCursor struct {
	after time.Time // created after this is new
	since time.Time // scored after this is news
}

func (c liveCursor) String() string {
	us := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	return us(c.after) + ":" + us(c.since)
}

func parseCursor(s string) (liveCursor, bool) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return liveCursor{}, false
	}
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return liveCursor{}, false
	}
	return liveCursor{after: micros(x), since: micros(y)}, true
}

func micros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// startCursor reads the cursor of a new or resumed stream: the page gives
// the newest match it shows (after, a createdAt in ms) and the time it
// was made (since, µs); a reconnect gives Last-Event-ID.
func startCursor(r *http.Request, now time.Time) liveCursor {
	if c, ok := parseCursor(r.Header.Get("Last-Event-ID")); ok {
		return c
	}
	var c liveCursor
	if ms, err := strconv.ParseFloat(r.URL.Query().Get("after"), 64); err == nil && ms > 0 {
		if t, err := core.CursorTime(ms); err == nil {
			c.after = t
		}
	}
	c.since = now.Add(-time.Minute)
	if us, err := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64); err == nil && us > 0 {
		c.since = micros(us)
	}
	return c
}

type liveEvent struct {
	ID      string  `json:"id"`
	Created float64 `json:"created"`
	HTML    string  `json:"html"`
}

// events streams the inbox's news as Server-Sent Events: matches that
// arrive and scores as they are given, for the same filter as the page.
// Each connection polls the database, which every replica shares, so a
// match that arrived through another replica shows up too; the
// connections are bounded in number and each is one goroutine, the
// request's own.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner := session(r).OwnerID
	f := parseFilter(r.URL.Query())
	q, err := f.query()
	if err != nil {
		http.Error(w, core.Message(err), http.StatusBadRequest)
		return
	}
	search := f.search()
	if !d.acquire(owner) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many live connections: the page still works, reload it for news", http.StatusServiceUnavailable)
		return
	}
	defer d.release(owner)
	cur := startCursor(r, d.cfg.Now())
	rc := http.NewResponseController(w)
	// The server's read timeout would otherwise end the stream: its
	// deadline still stands on the connection, and the background read
	// that notices a closed connection takes it for one.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 3000\n: live\n\n")) {
		return
	}
	poll := time.NewTicker(d.cfg.LivePoll)
	defer poll.Stop()
	life := time.NewTimer(d.cfg.StreamLifetime)
	defer life.Stop()
	quiet, checked := time.Now(), time.Now()
	var b bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.stop:
			return
		case <-life.C:
			return
		case <-poll.C:
		}
		if time.Since(checked) > recheck {
			c, err := d.readCookie(r)
			if err != nil {
				return
			}
			if _, err := d.deps.Sessions.Authenticate(ctx, c.Value); err != nil {
				return
			}
			checked = time.Now()
		}
		created, scored, err := d.deps.Inbox.Changes(ctx, owner, q, cur.after, cur.since, liveBatch)
		if err != nil {
			if ctx.Err() == nil {
				d.cfg.Logger.WarnContext(ctx, "live inbox poll failed", "err", err)
			}
			continue
		}
		b.Reset()
		sent := map[string]bool{}
		now := d.cfg.Now()
		// Oldest first, so that each lands on top of the one before.
		for i := len(created) - 1; i >= 0; i-- {
			it := created[i]
			sent[it.Match.ID] = true
			if it.Match.CreatedAt.After(cur.after) {
				cur.after = it.Match.CreatedAt
			}
			if it.ScoredAt.After(cur.since) {
				cur.since = it.ScoredAt
			}
			if err := d.writeEvent(ctx, owner, &b, it, now, cur, search); err != nil {
				d.cfg.Logger.ErrorContext(ctx, "rendering a live match failed", "err", err)
				return
			}
		}
		for i := len(scored) - 1; i >= 0; i-- {
			it := scored[i]
			if it.ScoredAt.After(cur.since) {
				cur.since = it.ScoredAt
			}
			if sent[it.Match.ID] {
				continue
			}
			if err := d.writeEvent(ctx, owner, &b, it, now, cur, search); err != nil {
				d.cfg.Logger.ErrorContext(ctx, "rendering a live match failed", "err", err)
				return
			}
		}
		if b.Len() == 0 {
			if time.Since(quiet) < heartbeat {
				continue
			}
			b.WriteString(": ping\n\n")
		}
		if !send(b.Bytes()) {
			return
		}
		quiet = time.Now()
	}
}

// writeEvent appends one match event carrying the match's markup, what
// search finds marked.
func (d *Dashboard) writeEvent(ctx context.Context, owner string, b *bytes.Buffer, it ports.InboxItem, now time.Time, cur liveCursor, search core.Search) error {
	html, err := d.matchHTML(ctx, owner, it, now, search)
	if err != nil {
		return err
	}
	data, err := json.Marshal(liveEvent{ID: it.Match.ID, Created: core.Millis(it.Match.CreatedAt), HTML: string(html)})
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "id: %s\nevent: match\ndata: %s\n\n", cur, data)
	return nil
}
