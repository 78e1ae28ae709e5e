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

// htmlStatus answers with an HTML page, as reddit answers a refusal of a
// feed or of a browser's request.
func htmlStatus(code int, page []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(code)
		_, _ = w.Write(page)
	}
}

// closedFeedReddit is a keyless reddit whose JSON is blocked for the
// address (403 and a block page, testdata/blocked.html) and whose feeds
// answer, except r/closedclub's: reddit's feed of a private or
// quarantined community is a 403 with an HTML page and no JSON reason
// (reddit's own ErrorController renders the private community's error
// page for every render style but JSON; reddit-archive/reddit,
// r2/r2/controllers/error.py and reddit_base.py), testdata/private.html.
func closedFeedReddit(t *testing.T) *http.ServeMux {
	mux := http.NewServeMux()
	blocked := htmlStatus(http.StatusForbidden, fixture(t, "blocked.html"))
	mux.Handle("GET /r/{name}/new.json", blocked)
	mux.Handle("GET /r/{name}/comments.json", blocked)
	mux.Handle("GET /r/"+community+"/new/.rss", atomFile(t, "feed_new.xml"))
	mux.Handle("GET /r/"+community+"/comments/.rss", atomFile(t, "feed_comments.xml"))
	private := htmlStatus(http.StatusForbidden, fixture(t, "private.html"))
	mux.Handle("GET /r/closedclub/new/.rss", private)
	mux.Handle("GET /r/closedclub/comments/.rss", private)
	return mux
}

// A busy community that went private is read alone, and first, as its
// checkpoint is the oldest. Its feed's refusal looks like a block of the
// address; it must not rest the feeds for every other community, cycle
// after cycle, and once the feeds answered others it is known as closed.
func TestClosedCommunityFeedDoesNotStopOthers(t *testing.T) {
	c := newClock()
	srv, _ := serve(t, c, closedFeedReddit(t))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(name string) (ports.RedditRead, error) {
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: name, Since: since}}})
	}
	for cycle := range 3 {
		_, cerr := read("closedclub")
		r, err := read(community)
		if err != nil || r.Via != ports.RedditViaFeed {
			t.Fatalf("cycle %d: r/%s after a closed community: via %q, err %v", cycle, community, r.Via, err)
		}
		if cycle > 0 && (!core.IsKind(cerr, core.KindNotFound) || !strings.Contains(cerr.Error(), "reddit says the community is")) {
			t.Errorf("cycle %d: r/closedclub: %v, want it known as closed", cycle, cerr)
		}
		c.Set(c.Now().Add(reddit.DefaultInterval))
	}
}

// A true block of the feeds still rests them. On a fresh process the
// way knows no community it answered, so each refusal is held as
// suspect, and the way rests at the fourth (maxSuspects) with no answer
// between: a block costs three requests more than it used to, once a
// rest. A block whose first refused communities had answered lately rests
// the way at once (TestAnsweredThenRefusedRestsAtOnce).
func TestFeedBlockStillRests(t *testing.T) {
	c := newClock()
	mux := http.NewServeMux()
	mux.Handle("GET /", htmlStatus(http.StatusForbidden, fixture(t, "blocked.html")))
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	for _, name := range []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"} {
		_, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: name, Since: since}}})
		if core.IsKind(err, core.KindNotFound) {
			t.Errorf("r/%s: %v, want the block read as a block", name, err)
		}
	}
	// alpha to gamma: json and feed refused, held as suspects; delta:
	// both refused again, the fourth suspect, and both rest.
	if got := len(rec.Hits()); got != 8 {
		t.Errorf("%d requests under a block, want 8: %v", got, rec.Paths())
	}
}

// openable is a handler that answers with open until close is set, then
// with closed.
type openable struct {
	open, closed http.Handler
	shut         atomic.Bool
}

func (o *openable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o.shut.Load() {
		o.closed.ServeHTTP(w, r)
		return
	}
	o.open.ServeHTTP(w, r)
}

// Communities the feeds answered lately that are now refused are a
// change at the address (a block), not theirs: the way rests at once,
// with no request more. Should it be the community that just went
// private, that costs one rest, once: its answer is forgotten, so its
// next refusal is weighed afresh, and once the feeds answered others it
// is known as not readable.
func TestAnsweredThenRefusedRestsAtOnce(t *testing.T) {
	c := newClock()
	feed := &openable{open: atomFile(t, "feed_new.xml"), closed: htmlStatus(http.StatusForbidden, fixture(t, "private.html"))}
	mux := closedFeedReddit(t)
	mux.Handle("GET /r/turncoat/new/.rss", feed)
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(name string) (ports.RedditRead, error) {
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: name, Since: since}}})
	}
	feedHits := func() int {
		n := 0
		for _, p := range rec.Paths() {
			if strings.HasSuffix(p, ".rss") {
				n++
			}
		}
		return n
	}
	if r, err := read("turncoat"); err != nil || r.Via != ports.RedditViaFeed {
		t.Fatalf("r/turncoat while open: via %q, err %v", r.Via, err)
	}
	feed.shut.Store(true)
	c.Set(c.Now().Add(reddit.DefaultInterval))
	if _, err := read("turncoat"); err == nil || core.IsKind(err, core.KindNotFound) {
		t.Fatalf("r/turncoat refused after it answered: %v, want the way's refusal", err)
	}
	before := feedHits()
	if _, err := read(community); err == nil {
		t.Fatalf("r/%s was read by a way that rests", community)
	}
	if got := feedHits(); got != before {
		t.Errorf("the feeds were asked %d times while resting", got-before)
	}
	// The next cycle: turncoat is weighed afresh, held as suspect, and
	// the feeds answering others make it known as not readable.
	c.Set(c.Now().Add(reddit.DefaultInterval))
	if _, err := read("turncoat"); err == nil || core.IsKind(err, core.KindNotFound) {
		t.Fatalf("r/turncoat weighed afresh: %v, want a refusal, not yet known as its own", err)
	}
	if r, err := read(community); err != nil || r.Via != ports.RedditViaFeed {
		t.Fatalf("r/%s after turncoat was held as suspect: via %q, err %v", community, r.Via, err)
	}
	c.Set(c.Now().Add(reddit.DefaultInterval))
	if _, err := read("turncoat"); !core.IsKind(err, core.KindNotFound) || !strings.Contains(err.Error(), "not readable") {
		t.Fatalf("r/turncoat: %v, want not readable", err)
	}
	if r, err := read(community); err != nil || r.Via != ports.RedditViaFeed {
		t.Fatalf("r/%s after turncoat was known: via %q, err %v", community, r.Via, err)
	}
}

// Two closed communities come first every cycle (their checkpoints are
// the oldest). Refused one after the other, they are held as suspects,
// not taken for a block; the feeds answering the next community make
// both known as not readable, and the feeds never rest.
func TestTwoClosedCommunitiesInARow(t *testing.T) {
	c := newClock()
	mux := closedFeedReddit(t)
	mux.Handle("GET /r/closedtoo/new/.rss", htmlStatus(http.StatusForbidden, fixture(t, "private.html")))
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(name string) (ports.RedditRead, error) {
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: name, Since: since}}})
	}
	for cycle := range 4 {
		hits := len(rec.Hits())
		for _, name := range []string{"closedclub", "closedtoo"} {
			_, err := read(name)
			if err == nil {
				t.Fatalf("cycle %d: r/%s was read", cycle, name)
			}
			if known := core.IsKind(err, core.KindNotFound) && strings.Contains(err.Error(), "not readable"); known != (cycle > 0) {
				t.Errorf("cycle %d: r/%s: %v, known as not readable: %v", cycle, name, err, known)
			}
		}
		r, err := read(community)
		if err != nil || r.Via != ports.RedditViaFeed {
			t.Fatalf("cycle %d: r/%s after two closed communities: via %q, err %v", cycle, community, r.Via, err)
		}
		var feeds []string
		for _, h := range rec.Hits()[hits:] {
			if strings.HasSuffix(h.Path, ".rss") {
				feeds = append(feeds, h.Path)
			}
		}
		want := []string{"/r/closedclub/new/.rss", "/r/closedtoo/new/.rss", "/r/" + community + "/new/.rss"}
		if !slices.Equal(feeds, want) {
			t.Errorf("cycle %d: feeds asked %v, want %v (never resting)", cycle, feeds, want)
		}
		c.Set(c.Now().Add(reddit.DefaultInterval))
	}
}

// Reddit answers 451 for a community withheld in the reader's country
// (prawcore maps it to UnavailableForLegalReasons; the page is reddit's
// HTML error page, reddit/error-pages). That is about the community: it
// must not rest the ways of the others, and is known as not readable.
func TestUnavailableForLegalReasonsDoesNotStopOthers(t *testing.T) {
	c := newClock()
	mux := redditRoutes(t)
	mux.Handle("GET /r/withheld/", htmlStatus(http.StatusUnavailableForLegalReasons, fixture(t, "legal.html")))
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(name string) (ports.RedditRead, error) {
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: name, Since: since}}})
	}
	for round := range 2 {
		_, werr := read("withheld")
		r, err := read(community)
		if err != nil || r.Via != ports.RedditViaJSON {
			t.Fatalf("round %d: r/%s after a withheld community: via %q, err %v", round, community, r.Via, err)
		}
		if round > 0 && (!core.IsKind(werr, core.KindNotFound) || !strings.Contains(werr.Error(), "http 451")) {
			t.Errorf("round %d: r/withheld: %v, want it known as not readable", round, werr)
		}
	}
}

// Reddit sends a browser asking for an over-18 or quarantined community
// to its interstitial (/over18?dest=..., an HTML page; reddit-archive/
// reddit, r2/r2/controllers/reddit_base.py), and a client that follows
// the redirect gets a page, not a listing. Should reddit do that to a
// feed or to JSON, that community is not read, but the others are.
func TestInterstitialRedirectDoesNotStopOthers(t *testing.T) {
	c := newClock()
	mux := redditRoutes(t)
	mux.Handle("GET /r/adultsonly/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/over18?dest="+r.URL.Path, http.StatusFound)
	}))
	mux.Handle("GET /over18", htmlStatus(http.StatusOK, []byte("<!DOCTYPE html><html><body><h1>You must be 18+ to view this community</h1></body></html>")))
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(names ...string) (ports.RedditRead, error) {
		var want []ports.RedditWant
		for _, n := range names {
			want = append(want, ports.RedditWant{Community: n, Since: since})
		}
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: want})
	}
	for round := range 2 {
		_, aerr := read("adultsonly")
		r, err := read(community)
		if err != nil || r.Via != ports.RedditViaJSON {
			t.Fatalf("round %d: r/%s after an interstitial: via %q, err %v", round, community, r.Via, err)
		}
		if round > 0 && !core.IsKind(aerr, core.KindNotFound) {
			t.Errorf("round %d: r/adultsonly: %v, want it known as not readable", round, aerr)
		}
	}
}

// Should reddit refuse a whole group for one closed community in it, the
// group is first held as suspect, then, once the way answered others, not
// found: the app then reads its communities alone, and the closed one is
// found the same way, while the feeds never rest for the others.
func TestGroupWithAClosedCommunity(t *testing.T) {
	c := newClock()
	mux := closedFeedReddit(t)
	mux.Handle("GET /r/closedclub+"+community+"/new/.rss", htmlStatus(http.StatusForbidden, fixture(t, "private.html")))
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func(names ...string) (ports.RedditRead, error) {
		var want []ports.RedditWant
		for _, n := range names {
			want = append(want, ports.RedditWant{Community: n, Since: since})
		}
		return src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: want})
	}
	answered := func(step string, names ...string) {
		t.Helper()
		if r, err := read(names...); err != nil || r.Via != ports.RedditViaFeed {
			t.Fatalf("%s: r/%v: via %q, err %v", step, names, r.Via, err)
		}
	}
	notReadable := func(step string, names ...string) {
		t.Helper()
		if _, err := read(names...); !core.IsKind(err, core.KindNotFound) || !strings.Contains(err.Error(), "not readable") {
			t.Fatalf("%s: r/%v: %v, want not readable", step, names, err)
		}
	}
	if _, err := read("closedclub", community); err == nil {
		t.Fatal("the refused group was read")
	}
	answered("first cycle", community)
	notReadable("second cycle", "closedclub", community)
	// The app reads a group that was not found one community at a time.
	if _, err := read("closedclub"); core.IsKind(err, core.KindNotFound) {
		t.Fatalf("closedclub alone, before the way answered others: %v", err)
	}
	answered("second cycle, alone", community)
	notReadable("third cycle", "closedclub")
	answered("third cycle", community)
}

// The second listing of communities whose first was refused is not asked
// again through that way, and a way passed over so is not named a
// refusal of a read that another way answered.
func TestSecondListingIsNotAskedAgain(t *testing.T) {
	c := newClock()
	srv, rec := serve(t, c, closedFeedReddit(t))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	for _, l := range ports.RedditListings {
		r, err := src.Read(context.Background(), ports.RedditQuery{Listing: l,
			Want: []ports.RedditWant{{Community: community, Since: since}}})
		if err != nil || r.Via != ports.RedditViaFeed {
			t.Fatalf("%s: via %q, err %v", l, r.Via, err)
		}
		if l == ports.RedditComments && len(r.Refused) != 0 {
			t.Errorf("comments: refused %+v, want none asked", r.Refused)
		}
	}
	want := []string{"/r/" + community + "/new.json", "/r/" + community + "/new/.rss", "/r/" + community + "/comments/.rss"}
	if got := rec.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths = %v, want %v", got, want)
	}
}

// A closed community's two listings come first every cycle, one after
// the other (their checkpoints are the oldest and stop moving). The
// second is passed over unasked, not taken for a block: the feeds rest
// for neither, answer the next community, and learn the refusal was the
// community's own.
func TestClosedCommunitysTwoListingsInARow(t *testing.T) {
	c := newClock()
	srv, _ := serve(t, c, closedFeedReddit(t))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	for cycle := range 3 {
		for _, l := range ports.RedditListings {
			_, err := src.Read(context.Background(), ports.RedditQuery{Listing: l,
				Want: []ports.RedditWant{{Community: "closedclub", Since: since}}})
			if err == nil {
				t.Fatalf("cycle %d: r/closedclub's %s was read", cycle, l)
			}
		}
		for _, l := range ports.RedditListings {
			r, err := src.Read(context.Background(), ports.RedditQuery{Listing: l,
				Want: []ports.RedditWant{{Community: community, Since: since}}})
			if err != nil || r.Via != ports.RedditViaFeed {
				t.Fatalf("cycle %d: r/%s's %s after the closed community's two: via %q, err %v", cycle, community, l, r.Via, err)
			}
		}
		c.Set(c.Now().Add(reddit.DefaultInterval))
	}
}
