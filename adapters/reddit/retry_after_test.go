package reddit_test

import (
	"context"
	"net/http"
	"testing"

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
	c.Set(c.Now().Add(3600 * 1e9))
	_, _ = src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: since}}})
	if n := len(rec.Hits()); n != 2 {
		t.Errorf("reddit asked %d times after the pause, want 2", n)
	}
}
