package reddit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Reddit refuses keyless JSON (403 with its HTML block page): the Atom
// feeds give the same posts, author without /u/, text as plain text
// without reddit's trailer, the permalink as the URL.
func TestFeeds(t *testing.T) {
	c := newClock()
	routes := redditRoutes(t)
	block := fixture(t, "blocked.html")
	srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".json") {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write(block)
			return
		}
		routes.ServeHTTP(w, r)
	}))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	got, err := readBoth(context.Background(), src, community, since)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != core.SourceReddit || !slices.Equal(got.Vias, []string{"feed", "feed"}) {
		t.Fatalf("source %s by %v, want reddit by feed", got.Source, got.Vias)
	}
	// Feeds carry no score or comment count; everything else is as JSON.
	want := slices.Clone(wantReddit)
	for i := range want {
		want[i].Post.Likes, want[i].Post.Comments = 0, 0
	}
	if !reflect.DeepEqual(got.Posts, want) {
		t.Errorf("posts:\n got %+v\nwant %+v", got.Posts, want)
	}
	if want := []string{"/r/smallbusiness/new.json", "/r/smallbusiness/new/.rss", "/r/smallbusiness/comments/.rss"}; !slices.Equal(rec.Paths(), want) {
		t.Errorf("paths = %v, want %v", rec.Paths(), want)
	}
	for _, h := range rec.Hits()[1:] {
		if h.Query.Get("limit") != "100" || h.Query.Has("raw_json") {
			t.Errorf("%s query = %v", h.Path, h.Query)
		}
	}
}

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		`<!-- SC_OFF --><div class="md"><p>Tom &amp; Jerry&#39;s &lt;b&gt; caf&eacute;</p> <p>second</p></div><!-- SC_ON --> &#32; submitted by &#32; <a href="https://www.reddit.com/user/x"> /u/x </a>`: "Tom & Jerry's <b> café\nsecond",
		`<table><tr><td><a href="x"><img src="y"/></a></td><td> &#32; submitted by &#32; <a href="z"> /u/x </a> <span><a href="l">[link]</a></span></td></tr></table>`:                                    "",
		`<div class="md"><blockquote><p>quoted</p></blockquote><ul><li>one</li><li>two <code>x&lt;y</code></li></ul><div>inner</div><p>after</p></div>`:                                                   "quoted\none\ntwo x<y\ninner\nafter",
		`plain words, no markup`:      "plain words, no markup",
		`<div class="md"><p>unclosed`: "unclosed",
	} {
		if got := reddit.PlainText(in); got != want {
			t.Errorf("PlainText(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// groupServer serves merged listings of several communities from one
// time-ordered list, 100 a page, and records what was asked.
func groupServer(t *testing.T, c *fakeClock, things []map[string]any) (*recorder, string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/{names}/{listing}", func(w http.ResponseWriter, r *http.Request) {
		names := map[string]bool{}
		for _, n := range strings.Split(r.PathValue("names"), "+") {
			names[n] = true
		}
		var page []map[string]any
		after := r.URL.Query().Get("after")
		started := after == ""
		for _, th := range things {
			if !names[th["subreddit"].(string)] {
				continue
			}
			if !started {
				started = th["name"] == after
				continue
			}
			page = append(page, th)
			if len(page) == 100 {
				break
			}
		}
		next := ""
		if len(page) == 100 {
			next = page[99]["name"].(string)
		}
		writeJSON(w, http.StatusOK, listing(t, next, page...))
	})
	srv, rec := serve(t, c, mux)
	return rec, srv.URL
}

func postIn(sub, id string, created int64) map[string]any {
	p := selfPost(id, created)
	p["subreddit"] = sub
	p["permalink"] = "/r/" + sub + "/comments/" + id + "/title/"
	return p
}

func TestGroupedRead(t *testing.T) {
	c := newClock()
	// 250 posts of "busy" one a second back from t0, and three of "quiet"
	// among them.
	var things []map[string]any
	for i := range 250 {
		things = append(things, postIn("busy", fmt.Sprintf("b%03d", i), t0-int64(i)))
		if i == 10 || i == 120 || i == 240 {
			things = append(things, postIn("quiet", "q"+strconv.Itoa(i), t0-int64(i)))
		}
	}
	rec, url := groupServer(t, c, things)
	src := newSource(t, c, nil, reddit.Config{BaseURL: url})
	ctx := context.Background()

	// quiet wants everything after t0-200, busy only after t0-50: the
	// read goes back as far as the oldest wish.
	r, err := src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{
		{Community: "Busy", Since: time.Unix(t0-50, 0)}, {Community: "quiet", Since: time.Unix(t0-200, 0)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p := rec.Paths(); len(p) != 3 || p[0] != "/r/busy+quiet/new.json" {
		t.Fatalf("paths = %v, want three pages of /r/busy+quiet/new.json", p)
	}
	count := map[string]int{}
	for _, p := range r.Posts {
		count[p.Community]++
	}
	if count["busy"] != 50 || count["quiet"] != 2 || r.Requests != 3 || r.Via != "json" {
		t.Errorf("counts %v, requests %d, via %s", count, r.Requests, r.Via)
	}
	for _, cv := range r.Covered {
		if !cv.Complete || !cv.Until.Equal(time.Unix(t0, 0)) || cv.Posts != count[cv.Community] {
			t.Errorf("cover %+v", cv)
		}
	}

	// A cap of one page: the listing does not reach quiet's since, so
	// quiet is not complete and busy is.
	c2 := newClock()
	rec2, url2 := groupServer(t, c2, things)
	src2 := newSource(t, c2, nil, reddit.Config{BaseURL: url2})
	r, err = src2.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{
		{Community: "busy", Since: time.Unix(t0-50, 0)}, {Community: "quiet", Since: time.Unix(t0-100000, 0)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec2.Hits()); n != 3 {
		t.Errorf("requests = %d; the listing ends after 253 posts", n)
	}
	for _, cv := range r.Covered {
		// The listing ended: everything it had was seen.
		if !cv.Complete {
			t.Errorf("cover %+v, want complete: the listing ended", cv)
		}
	}

	for _, bad := range [][]ports.RedditWant{
		nil,
		{{Community: "a"}, {Community: "A"}},
		slices.Repeat([]ports.RedditWant{{Community: "a"}}, ports.MaxRedditGroup+1),
	} {
		if _, err := src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: bad}); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("%d wants: err = %v, want invalid", len(bad), err)
		}
	}
	if _, err := src.Read(ctx, ports.RedditQuery{Listing: "hot", Want: []ports.RedditWant{{Community: "a"}}}); !core.IsKind(err, core.KindInvalid) {
		t.Errorf("listing hot: err = %v", err)
	}
}

// A group whose listing holds more than the page cap before reaching a
// member's since reports that member incomplete, from the oldest post
// reached.
func TestGroupedReadCap(t *testing.T) {
	c := newClock()
	var things []map[string]any
	for i := range 100 * (reddit.MaxPages + 2) {
		things = append(things, postIn("busy", fmt.Sprintf("b%04d", i), t0-int64(i)))
	}
	things = append(things, postIn("quiet", "q1", t0-5000))
	rec, url := groupServer(t, c, things)
	src := newSource(t, c, nil, reddit.Config{BaseURL: url})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{
		{Community: "busy", Since: time.Unix(t0-100, 0)}, {Community: "quiet", Since: time.Unix(t0-6000, 0)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Hits()); n != reddit.MaxPages {
		t.Errorf("requests = %d, want the cap %d", n, reddit.MaxPages)
	}
	reached := time.Unix(t0-int64(100*reddit.MaxPages-1), 0)
	for _, cv := range r.Covered {
		if !cv.From.Equal(reached) || cv.Complete != (cv.Community == "busy") {
			t.Errorf("cover %+v, want from %v, complete only for busy", cv, reached)
		}
	}
}

// The archive covers a community only up to its newest item, and says
// how far behind that was.
func TestArchiveHighWaterMark(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	msrv, _ := serve(t, c, mirrorRoutes(t, reddit.MirrorArcticShift))
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: since}}})
	if err != nil {
		t.Fatal(err)
	}
	newest := time.Unix(1767225500, 0).UTC() // t3_1hx0a1, the newest post the archive holds
	if r.Via != "archive" || r.Source != core.SourceMirror || len(r.Covered) != 1 || !r.Covered[0].Until.Equal(newest) ||
		!r.Covered[0].Complete || r.ArchiveLag[community] != c.Now().Sub(newest) {
		t.Errorf("archive read: via %s, cover %+v, lag %v", r.Via, r.Covered, r.ArchiveLag)
	}
	if len(r.Refused) != 2 || r.Refused[0].Via != "json" || r.Refused[1].Reason != "http 403" {
		t.Errorf("refused = %+v", r.Refused)
	}
}

// The feeds take a group the same way: one merged feed, each entry
// credited to the community its category names.
func TestGroupedFeed(t *testing.T) {
	c := newClock()
	mux := http.NewServeMux()
	mux.Handle("GET /r/smallbusiness+golang/new.json", status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`))
	mux.Handle("GET /r/smallbusiness+golang/new/.rss", atomFile(t, "feed_new.xml"))
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{
		{Community: community, Since: since}, {Community: "golang", Since: since},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Via != "feed" || len(r.Refused) != 1 || r.Refused[0].Reason != "http 403" || r.Requests != 2 {
		t.Fatalf("via %s, refused %+v, requests %d", r.Via, r.Refused, r.Requests)
	}
	if want := []string{"t3_1hx0a1", "t3_1hx0a4"}; !slices.Equal(ids(r.Posts), want) {
		t.Errorf("posts %v, want %v", ids(r.Posts), want)
	}
	for _, cv := range r.Covered {
		want := map[string]int{community: 2, "golang": 0}[cv.Community]
		if !cv.Complete || cv.Posts != want {
			t.Errorf("cover %+v", cv)
		}
	}
	if p := rec.Paths(); len(p) != 2 {
		t.Errorf("paths %v", p)
	}
}

// An archive item dated after the read covers nothing past the read:
// the cover's Until becomes the community's checkpoint, which never
// moves back, so a date in the future would hide every post made before
// it.
func TestArchiveCoversNothingAfterTheRead(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	future := selfPost("f1", t0+365*86400)
	body, err := json.Marshal(map[string]any{"data": []map[string]any{future, selfPost("a1", t0-100)}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+mirrorPaths[reddit.MirrorArcticShift][0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, body)
	}))
	msrv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: since}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Covered) != 1 || r.Covered[0].Until.After(c.Now()) {
		t.Errorf("cover %+v reaches past the read at %v", r.Covered, c.Now())
	}
}

// feedOf renders an Atom feed in reddit's shape of entries (post ids and
// unix seconds); an entry of time 0 carries no date.
func feedOf(sub string, ids []string, created []int64) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>newest submissions : ` + sub + `</title>`)
	for i, id := range ids {
		date := ""
		if created[i] != 0 {
			date = "<published>" + time.Unix(created[i], 0).UTC().Format(time.RFC3339) + "</published>"
		}
		fmt.Fprintf(&b, `<entry><author><name>/u/a_%s</name></author><category term="%s" label="r/%s"/>`+
			`<content type="html">&lt;div class=&quot;md&quot;&gt;&lt;p&gt;text %s&lt;/p&gt;&lt;/div&gt;</content>`+
			`<id>t3_%s</id><link href="https://www.reddit.com/r/%s/comments/%s/t/" />%s<title>title %s</title></entry>`,
			id, sub, sub, id, id, sub, id, date, id)
	}
	b.WriteString(`</feed>`)
	return []byte(b.String())
}

// A full feed page is not the feed's end because one of its entries
// could not be used: the page ended at 100 entries, so older ones follow,
// and the read must not cover a span it never saw.
func TestFeedPageWithAnUnusableEntryIsNotTheEnd(t *testing.T) {
	c := newClock()
	var names []string
	var times []int64
	for i := range 250 {
		names = append(names, fmt.Sprintf("f%03d", i))
		times = append(times, t0-int64(i)*10)
	}
	times[50] = 0 // reddit's entry without a date
	mux := http.NewServeMux()
	mux.Handle("GET /r/"+community+"/new.json", status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`))
	mux.HandleFunc("GET /r/"+community+"/new/.rss", func(w http.ResponseWriter, r *http.Request) {
		start := 0
		if after := r.URL.Query().Get("after"); after != "" {
			start = slices.Index(names, strings.TrimPrefix(after, "t3_")) + 1
		}
		end := min(start+100, len(names))
		w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
		_, _ = w.Write(feedOf(community, names[start:end], times[start:end]))
	})
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	from := time.Unix(t0-2000, 0) // between the second and the third page
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: from}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Via != "feed" || len(r.Covered) != 1 {
		t.Fatalf("via %s, cover %+v", r.Via, r.Covered)
	}
	cv := r.Covered[0]
	saw := slices.Contains(ids(r.Posts), "t3_f150")
	if cv.Complete && !saw {
		t.Errorf("cover %+v complete after %d requests, but t3_f150, made after since, was never read", cv, len(rec.Hits()))
	}
}

// An archive that answers a later page with what it already gave (it
// ignores after, or a second holds more than a page) has shown nothing
// newer: the read stops there and covers only up to the second before the
// newest item it saw, which more items may share.
func TestArchiveRepeatedPageIsNotCover(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	var page []map[string]any
	for i := range 100 {
		page = append(page, selfPost(fmt.Sprintf("a%03d", i), t0-199+int64(i)))
	}
	body, err := json.Marshal(map[string]any{"data": page})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+mirrorPaths[reddit.MirrorArcticShift][0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, body)
	}))
	msrv, mrec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	from := time.Unix(t0-5000, 0) // long before the page's oldest item
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: from}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Covered) != 1 || !r.Covered[0].From.Equal(from) || !r.Covered[0].Until.Equal(time.Unix(t0-101, 0)) {
		t.Errorf("cover %+v after %d archive requests, want from since to the second before the newest item seen",
			r.Covered, len(mrec.Hits()))
	}
	if n := len(mrec.Hits()); n != 2 {
		t.Errorf("%d archive requests, want 2: the repeated page ends the read", n)
	}
}
