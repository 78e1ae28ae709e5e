package reddit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// closedNames are communities reddit refuses as closed: their feeds
// answer 403 and testdata/private.html, as closedFeedReddit's
// r/closedclub (reddit's private community's error page for every render
// style but JSON; reddit-archive/reddit, r2/r2/controllers/error.py).
var closedNames = []string{"closedclub", "closed2", "closed3", "closed4", "closed5"}

// feedPaths are the feeds asked among hits, with their limit when it is
// not a full page.
func feedPaths(hits []hit) []string {
	var out []string
	for _, h := range hits {
		if strings.HasSuffix(h.Path, ".rss") {
			p := h.Path
			if l := h.Query.Get("limit"); l != "100" {
				p += "?limit=" + l
			}
			out = append(out, p)
		}
	}
	return out
}

func readPosts(src *reddit.Source, name string) (ports.RedditRead, error) {
	return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: name, Since: since}}})
}

// Five closed communities come first every cycle (their checkpoints are
// the oldest). At the fourth refusal in a row, the feeds ask once, for one
// item, a community they answered lately; it answers, so the refusals were
// the communities' own: the feeds never rest, and from the next cycle all
// five are known as not readable, with no control read more.
func TestFourClosedCommunitiesInARowAskAControl(t *testing.T) {
	c := newClock()
	mux := closedFeedReddit(t)
	for _, name := range closedNames[1:] {
		mux.Handle("GET /r/"+name+"/new/.rss", htmlStatus(http.StatusForbidden, fixture(t, "private.html")))
	}
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	if r, err := readPosts(src, community); err != nil || r.Via != ports.RedditViaFeed {
		t.Fatalf("r/%s: via %q, err %v", community, r.Via, err)
	}
	c.Set(c.Now().Add(reddit.DefaultInterval))

	for cycle := range 3 {
		hits := len(rec.Hits())
		for i, name := range closedNames {
			r, err := readPosts(src, name)
			if err == nil {
				t.Fatalf("cycle %d: r/%s was read", cycle, name)
			}
			known := core.IsKind(err, core.KindNotFound) && strings.Contains(err.Error(), "not readable")
			if known != (cycle > 0) {
				t.Errorf("cycle %d: r/%s: %v, known as not readable: %v", cycle, name, err, known)
			}
			if cycle == 0 && i == 3 && r.Requests != 2 {
				// JSON rests by then (it answered nothing); the feed's
				// refusal and the control read.
				t.Errorf("cycle 0: r/%s counted %d requests, want 2 with the control read", name, r.Requests)
			}
		}
		if r, err := readPosts(src, community); err != nil || r.Via != ports.RedditViaFeed {
			t.Fatalf("cycle %d: r/%s after five closed communities: via %q, err %v", cycle, community, r.Via, err)
		}
		want := []string{"/r/closedclub/new/.rss", "/r/closed2/new/.rss", "/r/closed3/new/.rss", "/r/closed4/new/.rss",
			"/r/" + community + "/new/.rss?limit=1", "/r/closed5/new/.rss", "/r/" + community + "/new/.rss"}
		if cycle > 0 {
			want = slices.Delete(want, 4, 5)
		}
		if got := feedPaths(rec.Hits()[hits:]); !slices.Equal(got, want) {
			t.Errorf("cycle %d: feeds asked %v, want %v", cycle, got, want)
		}
		c.Set(c.Now().Add(reddit.DefaultInterval))
	}
}

// A block first seen on communities not answered lately: the fourth
// refusal sends one control read, the control is refused too, and the
// feeds rest for everyone, with no request more. The control's answer is
// forgotten, so the next rest, with no community answered lately left to
// ask, comes as it did before control reads: a single watched community
// keeps that behaviour too.
func TestBlockSeenOnClosedCommunitiesRestsAfterOneControl(t *testing.T) {
	c := newClock()
	var blocked atomic.Bool
	routes := closedFeedReddit(t)
	block := htmlStatus(http.StatusForbidden, fixture(t, "blocked.html"))
	srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if blocked.Load() {
			block(w, r) // reddit's block page for the address (testdata/blocked.html)
			return
		}
		routes.ServeHTTP(w, r)
	}))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	if r, err := readPosts(src, community); err != nil || r.Via != ports.RedditViaFeed {
		t.Fatalf("r/%s: via %q, err %v", community, r.Via, err)
	}
	blocked.Store(true)
	c.Set(c.Now().Add(reddit.DefaultInterval))

	hits := len(rec.Hits())
	for _, name := range []string{"alpha", "beta", "gamma", "delta", "epsilon", community} {
		if _, err := readPosts(src, name); err == nil || core.IsKind(err, core.KindNotFound) {
			t.Errorf("r/%s under a block: %v, want the block read as a block", name, err)
		}
	}
	want := []string{"/r/alpha/new/.rss", "/r/beta/new/.rss", "/r/gamma/new/.rss", "/r/delta/new/.rss",
		"/r/" + community + "/new/.rss?limit=1"}
	if got := feedPaths(rec.Hits()[hits:]); !slices.Equal(got, want) {
		t.Errorf("feeds asked %v, want %v (one control read, then resting)", got, want)
	}

	// Past the rest, still blocked: no community answered lately is left,
	// so the fourth refusal rests the feeds with no control read.
	c.Set(c.Now().Add(reddit.DefaultInterval))
	hits = len(rec.Hits())
	for _, name := range []string{"zeta", "eta", "theta", "iota", "kappa"} {
		if _, err := readPosts(src, name); err == nil {
			t.Errorf("r/%s was read under a block", name)
		}
	}
	want = []string{"/r/zeta/new/.rss", "/r/eta/new/.rss", "/r/theta/new/.rss", "/r/iota/new/.rss"}
	if got := feedPaths(rec.Hits()[hits:]); !slices.Equal(got, want) {
		t.Errorf("feeds asked %v, want %v (no control read, then resting)", got, want)
	}
}
