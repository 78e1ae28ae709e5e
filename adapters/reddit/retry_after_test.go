package reddit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// A 503 that names when to come back (Retry-After, as a server in
// maintenance answers: RFC 9110 section 10.2.3) is a failure of
// reddit, not its budget: the archive covers the gap until then, as it
// does for a 429. It used to hold every keyless request back for the
// hour the 503 named, so the feeds were never asked, and every read was
// left for later as if reddit's budget were spent, the archive never
// asked either.
func TestRetryAfterOn503GoesToTheArchive(t *testing.T) {
	c := newClock()
	// Reddit's maintenance answer: 503 and an HTML page; its body's shape
	// does not matter, only the status and the header.
	srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("<!doctype html><title>reddit</title><p>Our servers are busy right now.</p>"))
	}))
	msrv, mrec := serve(t, c, mirrorRoutes(t, reddit.MirrorArcticShift))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL, MirrorURL: msrv.URL})

	for _, l := range ports.RedditListings {
		r, err := src.Read(context.Background(), ports.RedditQuery{Listing: l,
			Want: []ports.RedditWant{{Community: community, Since: since}}, Deadline: c.Now().Add(9 * reddit.DefaultInterval / 10)})
		if err != nil || r.Via != ports.RedditViaArchive {
			t.Fatalf("%s: read via %q, %v; want the archive", l, r.Via, err)
		}
	}
	if n := len(rec.Hits()); n != 1 {
		t.Errorf("reddit asked %d times, want once: both keyless ways rest until the time it named", n)
	}
	if n := len(mrec.Hits()); n != 2 {
		t.Errorf("archive asked %d times, want 2", n)
	}
	// Once the time reddit named has passed, reddit is asked again.
	c.Set(c.Now().Add(time.Hour))
	_, _ = src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: since}}})
	if n := len(rec.Hits()); n != 2 {
		t.Errorf("reddit asked %d times after the pause, want 2", n)
	}
}

// A 429 of the feeds rests keyless JSON too (one budget), but JSON that
// already rests longer for a failure of its own keeps that failure as
// its reason: it used to show the feeds' 429 for the rest of its hour,
// so the status told the operator JSON was throttled when it was down.
func TestFeed429KeepsJSONsOwnReason(t *testing.T) {
	c := newClock()
	var mu sync.Mutex
	feeds := 0
	srv, _ := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".json") {
			status(http.StatusServiceUnavailable, `{"message": "Service Unavailable", "error": 503}`)(w, r)
			return
		}
		mu.Lock()
		feeds++
		first := feeds == 1
		mu.Unlock()
		if first {
			// Reddit's 429 names its pause in Retry-After.
			w.Header().Set("Retry-After", "60")
			status(http.StatusTooManyRequests, `{"message": "Too Many Requests", "error": 429}`)(w, r)
			return
		}
		status(http.StatusBadGateway, `{"message": "Bad Gateway", "error": 502}`)(w, r)
	}))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	want := []ports.RedditWant{{Community: community, Since: since}}
	if _, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: want}); err == nil {
		t.Fatal("first read answered")
	}
	c.Set(c.Now().Add(2 * time.Minute))
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: want})
	if err == nil {
		t.Fatal("second read answered")
	}
	// JSON rests, unasked, and keeps the reason of its rest.
	wantRefused := []ports.RedditRefusal{{Via: ports.RedditViaJSON, Reason: "http 503", NotAsked: true}, {Via: ports.RedditViaFeed, Reason: "http 502"}}
	if !slices.Equal(r.Refused, wantRefused) {
		t.Errorf("refused = %+v, want %+v", r.Refused, wantRefused)
	}
}
