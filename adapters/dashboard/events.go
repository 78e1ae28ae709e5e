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

// liveGrace holds a stream's cursors back behind the newest times it has
// seen. A scoring batch takes its time before it commits, and batches run
// side by side (gormstore's scoring lock is shared): one that took an
// earlier time can commit after a poll that saw a later one. Created times
// are held back alike: gormstore stamps them in commit order per owner,
// but ports.TriageStore does not promise it. 5 seconds is more than two
// polls, meant to outlast a batch's transaction from taking its time to
// committing and replicas' clocks apart; a commit later than that shows on
// the next page load. Each poll asks again for what the window holds, at
// most liveBatch of each, and skips what it sent (sentSet).
const liveGrace = 5 * time.Second

// liveSent bounds what a stream remembers having sent within its window:
// a full batch of each kind on every poll for 4 polls, longer than the
// window at the default poll of 2 seconds.
const liveSent = 8 * liveBatch

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

// liveCursor is where a live view polls from: liveGrace behind the newest
// match it shows and the last scoring it saw. It travels as the SSE event
// id, so a browser that reconnects resumes where it was, commits that
// came late included.
type liveCursor struct {
	after time.Time // created after this is new
	since time.Time // scored after this is news
}

// back is t held back by the grace window; zero stays zero (no bound),
// and the result stays a time an event id can carry (after 1970).
func back(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return micros(max(t.Add(-liveGrace).UnixMicro(), 1))
}

// follow moves c up to the window behind top, the newest times seen; it
// never moves back.
func (c liveCursor) follow(top liveCursor) liveCursor {
	if a := back(top.after); a.After(c.after) {
		c.after = a
	}
	if s := back(top.since); s.After(c.since) {
		c.since = s
	}
	return c
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
// was made (since, µs), held back here as the page's read could miss a
// late commit too; a reconnect gives Last-Event-ID, held back already.
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
	return liveCursor{after: back(c.after), since: back(c.since)}
}

// sentSet is what a stream sent that its window may answer again: a match
// by its id and scoring, so a score that comes after the match is sent
// too. It forgets what falls behind the cursor, and past max entries the
// oldest sent, which a later poll may then send again: the page swaps a
// match it shows for the new markup, so that costs a redraw, no copy.
type sentSet struct {
	max   int
	order []sentEntry // oldest first
	has   map[sentKey]bool
}

type sentKey struct {
	id     string
	scored int64 // µs; 0 when unscored
}

type sentEntry struct {
	key     sentKey
	created time.Time
}

func newSentSet(max int) *sentSet {
	return &sentSet{max: max, has: make(map[sentKey]bool, max)}
}

func keyOf(it ports.InboxItem) sentKey {
	k := sentKey{id: it.Match.ID}
	if !it.ScoredAt.IsZero() {
		k.scored = it.ScoredAt.UnixMicro()
	}
	return k
}

// add records it and says whether it was new.
func (s *sentSet) add(it ports.InboxItem) bool {
	k := keyOf(it)
	if s.has[k] {
		return false
	}
	if len(s.order) >= s.max {
		delete(s.has, s.order[0].key)
		s.order = append(s.order[:0], s.order[1:]...)
	}
	s.has[k] = true
	s.order = append(s.order, sentEntry{key: k, created: it.Match.CreatedAt})
	return true
}

// forget drops what neither of c's queries can answer again.
func (s *sentSet) forget(c liveCursor) {
	kept := s.order[:0]
	for _, e := range s.order {
		if e.created.After(c.after) || (e.key.scored != 0 && e.key.scored > c.since.UnixMicro()) {
			kept = append(kept, e)
		} else {
			delete(s.has, e.key)
		}
	}
	s.order = kept
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
	// The inbox's first step: its owner has no phrase and so no match.
	// The stream tells it when a phrase exists, then ends.
	first := r.URL.Query().Get("first") == "1"
	if !d.acquire(owner) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many live connections: the page still works, reload it for news", http.StatusServiceUnavailable)
		return
	}
	defer d.release(owner)
	cur := startCursor(r, d.cfg.Now())
	var top liveCursor // the newest times seen
	sent := newSentSet(liveSent)
	fresh := make([]ports.InboxItem, 0, 2*liveBatch) // what a poll sends
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
		if first {
			phrases, err := d.deps.Phrases.List(ctx, owner, ports.PhraseFilter{})
			if err != nil {
				if ctx.Err() == nil {
					d.cfg.Logger.WarnContext(ctx, "live inbox poll failed", "err", err)
				}
				continue
			}
			if len(phrases) > 0 {
				send([]byte("event: phrase\ndata: {}\n\n"))
				return
			}
			if time.Since(quiet) >= heartbeat {
				if !send([]byte(": ping\n\n")) {
					return
				}
				quiet = time.Now()
			}
			continue
		}
		created, scored, err := d.deps.Inbox.Changes(ctx, owner, q, cur.after, cur.since, liveBatch)
		if err != nil {
			if ctx.Err() == nil {
				d.cfg.Logger.WarnContext(ctx, "live inbox poll failed", "err", err)
			}
			continue
		}
		b.Reset()
		now := d.cfg.Now()
		// Oldest first, so that each lands on top of the one before; the
		// window answers again what was sent already, skipped here.
		fresh = fresh[:0]
		for n, batch := range [][]ports.InboxItem{created, scored} {
			for i := len(batch) - 1; i >= 0; i-- {
				it := batch[i]
				if n == 0 && it.Match.CreatedAt.After(top.after) {
					top.after = it.Match.CreatedAt
				}
				if it.ScoredAt.After(top.since) {
					top.since = it.ScoredAt
				}
				cur = cur.follow(top)
				if sent.add(it) {
					fresh = append(fresh, it)
				}
			}
		}
		sent.forget(cur)
		// Only the poll's last event carries the cursor: a created match's
		// score moves since past scores written after it, so an earlier
		// event's id would resume past them. A browser cut off mid-poll
		// keeps the id before it and gets the poll again, which the page
		// swaps in place.
		for i, it := range fresh {
			var id string
			if i == len(fresh)-1 {
				id = cur.String()
			}
			if err := d.writeEvent(ctx, owner, &b, it, now, id, search); err != nil {
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
// search finds marked, and id unless it is empty (the browser keeps the
// last id it got).
func (d *Dashboard) writeEvent(ctx context.Context, owner string, b *bytes.Buffer, it ports.InboxItem, now time.Time, id string, search core.Search) error {
	html, err := d.matchHTML(ctx, owner, it, now, search)
	if err != nil {
		return err
	}
	data, err := json.Marshal(liveEvent{ID: it.Match.ID, Created: core.Millis(it.Match.CreatedAt), HTML: string(html)})
	if err != nil {
		return err
	}
	if id != "" {
		fmt.Fprintf(b, "id: %s\n", id)
	}
	fmt.Fprintf(b, "event: match\ndata: %s\n\n", data)
	return nil
}
