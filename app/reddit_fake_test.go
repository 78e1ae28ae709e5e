package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// simClock is the time of a simulation: the poller, the source and both
// fakes read it, and it moves only when the source waits for its budget
// or the test moves it.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func newSimClock() *simClock { return &simClock{now: time.Unix(1767225600, 0).UTC()} }

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

func (c *simClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *simClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// fakePost is one post or comment on the fake reddit.
type fakePost struct {
	community string
	listing   ports.RedditListing
	id        string // base 36, without the kind
	text      string
	created   time.Time
	visible   time.Time // when it shows up in reddit's listing
	archived  time.Time // when the archive has it; zero: never
}

func (p *fakePost) fullname() string {
	if p.listing == ports.RedditComments {
		return "t1_" + p.id
	}
	return "t3_" + p.id
}

func (p *fakePost) data() map[string]any {
	d := map[string]any{
		"id": p.id, "name": p.fullname(), "subreddit": p.community, "author": "someone",
		"created_utc": float64(p.created.Unix()), "score": 1,
	}
	if p.listing == ports.RedditComments {
		d["body"] = p.text
		d["link_id"] = "t3_parent"
		d["permalink"] = "/r/" + p.community + "/comments/parent/x/" + p.id + "/"
	} else {
		d["title"] = "post " + p.id
		d["selftext"] = p.text
		d["num_comments"] = 0
		d["permalink"] = "/r/" + p.community + "/comments/" + p.id + "/x/"
	}
	return d
}

// fakeReddit plays reddit's JSON listings, merged over several
// communities, and an Arctic Shift archive of the same posts. It counts
// requests and answers 429 past a budget per minute, as reddit does.
type fakeReddit struct {
	clock *simClock

	mu         sync.Mutex
	posts      map[string][]*fakePost // by community
	refuse     int                    // while set, reddit answers every request with it
	refuseJSON int                    // while set, reddit answers JSON (not the feeds) with it
	retryAfter string                 // Retry-After sent with a refusal, when set
	requests   int
	byWay      map[string]int // requests by way: json, feed
	archive    int            // archive requests
	perMinute  int            // 0: no budget enforced
	// keylessPerMinute is the source's keyless budget; 0: its default.
	keylessPerMinute int
	window           time.Time
	used             int
	tooMany          int // 429s for going past the budget
	nextID           int

	reddit, arch *httptest.Server
}

func newFakeReddit(t testing.TB, c *simClock) *fakeReddit {
	f := &fakeReddit{clock: c, posts: map[string][]*fakePost{}, byWay: map[string]int{}}
	f.reddit = httptest.NewServer(http.HandlerFunc(f.serveReddit))
	f.arch = httptest.NewServer(http.HandlerFunc(f.serveArchive))
	t.Cleanup(f.reddit.Close)
	t.Cleanup(f.arch.Close)
	return f
}

// add puts a post on reddit, made at created, in the listing from visible,
// in the archive from archived (zero: never).
func (f *fakeReddit) add(community string, l ports.RedditListing, text string, created, visible, archived time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	p := &fakePost{community: community, listing: l, id: "p" + strconv.FormatInt(int64(f.nextID), 36), text: text,
		created: created, visible: visible, archived: archived}
	f.posts[community] = append(f.posts[community], p)
	return p.fullname()
}

func (f *fakeReddit) setRefuse(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = status
}

// refuseKeylessJSON makes reddit answer keyless JSON with status and its
// HTML block page while the feeds still answer, as reddit does for server
// addresses.
func (f *fakeReddit) refuseKeylessJSON(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseJSON = status
}

// ways returns the requests made to reddit's JSON and to its feeds.
func (f *fakeReddit) ways() (json, feed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byWay["json"], f.byWay["feed"]
}

func (f *fakeReddit) counts() (requests, archive, tooMany int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.archive, f.tooMany
}

func (f *fakeReddit) serveReddit(w http.ResponseWriter, r *http.Request) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.perMinute > 0 {
		if now.Sub(f.window) >= time.Minute {
			f.window, f.used = now, 0
		}
		f.used++
		w.Header().Set("X-Ratelimit-Remaining", strconv.Itoa(max(f.perMinute-f.used, 0)))
		w.Header().Set("X-Ratelimit-Reset", strconv.Itoa(int((time.Minute - now.Sub(f.window)).Seconds())))
		if f.used > f.perMinute {
			f.tooMany++
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
	}
	// /r/a+b/new.json, /r/a+b/comments.json, and their feeds
	// /r/a+b/new/.rss, /r/a+b/comments/.rss.
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	feed := len(parts) == 4 && parts[3] == ".rss"
	way := "json"
	if feed {
		way = "feed"
	}
	f.byWay[way]++
	if refuse := f.refuse; refuse != 0 || (!feed && f.refuseJSON != 0) {
		if refuse == 0 {
			refuse = f.refuseJSON
		}
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		// Reddit's block page is HTML whatever was asked
		// (adapters/reddit/testdata/blocked.html).
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(refuse)
		_, _ = w.Write([]byte("<html><body>blocked</body></html>"))
		return
	}
	if !feed && (len(parts) != 3 || !strings.HasSuffix(parts[2], ".json")) || parts[0] != "r" {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	listing := ports.RedditListing(strings.TrimSuffix(parts[2], ".json"))
	var all []*fakePost
	for _, name := range strings.Split(parts[1], "+") {
		for _, p := range f.posts[name] {
			if p.listing == listing && !p.visible.After(now) {
				all = append(all, p)
			}
		}
	}
	sortNewest(all)
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	after := r.URL.Query().Get("after")
	start := 0
	if after != "" {
		start = len(all)
		for i, p := range all {
			if p.fullname() == after {
				start = i + 1
				break
			}
		}
	}
	page := all[start:min(start+limit, len(all))]
	if feed {
		writeFeed(w, page)
		return
	}
	children := make([]map[string]any, len(page))
	kind := "t3"
	if listing == ports.RedditComments {
		kind = "t1"
	}
	for i, p := range page {
		children[i] = map[string]any{"kind": kind, "data": p.data()}
	}
	var next any
	if start+limit < len(all) && len(page) > 0 {
		next = page[len(page)-1].fullname()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Listing", "data": map[string]any{"after": next, "children": children}})
}

// writeFeed answers one page of an Atom feed in reddit's shape
// (adapters/reddit/testdata/feed_new.xml, feed_comments.xml): the
// fullname as the entry id, the community as its category, the text as
// escaped HTML.
func writeFeed(w http.ResponseWriter, page []*fakePost) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">`)
	for _, p := range page {
		d := p.data()
		title := "/u/someone on post"
		if p.listing == ports.RedditPosts {
			title = d["title"].(string)
		}
		fmt.Fprintf(&b, `<entry><author><name>/u/someone</name></author><category term="%s" label="r/%s"/>`+
			`<content type="html">&lt;div class=&quot;md&quot;&gt;&lt;p&gt;%s&lt;/p&gt;&lt;/div&gt;</content>`+
			`<id>%s</id><link href="https://www.reddit.com%s" /><updated>%s</updated><published>%s</published>`+
			`<title>%s</title></entry>`,
			p.community, p.community, html.EscapeString(html.EscapeString(p.text)), p.fullname(), d["permalink"],
			p.created.Format(time.RFC3339), p.created.Format(time.RFC3339), html.EscapeString(title))
	}
	b.WriteString(`</feed>`)
	w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
	_, _ = w.Write([]byte(b.String()))
}

func (f *fakeReddit) serveArchive(w http.ResponseWriter, r *http.Request) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.archive++
	listing := ports.RedditPosts
	if r.URL.Path == "/api/comments/search" {
		listing = ports.RedditComments
	}
	q := r.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	limit, _ := strconv.Atoi(q.Get("limit"))
	var all []*fakePost
	for _, p := range f.posts[q.Get("subreddit")] {
		if p.listing != listing || p.archived.IsZero() || p.archived.After(now) || p.created.Unix() <= after ||
			(before > 0 && p.created.Unix() >= before) {
			continue
		}
		all = append(all, p)
	}
	// Arctic Shift sorts by created_utc, oldest first with sort=asc
	// (its api/README.md).
	sortNewest(all)
	if q.Get("sort") == "asc" {
		slices.Reverse(all)
	}
	data := []map[string]any{}
	for _, p := range all[:min(limit, len(all))] {
		data = append(data, p.data())
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func sortNewest(ps []*fakePost) {
	slices.SortFunc(ps, func(a, b *fakePost) int {
		if c := b.created.Compare(a.created); c != 0 {
			return c
		}
		return cmp.Compare(b.fullname(), a.fullname())
	})
}

// source is a keyless reddit source on the fake, with the archive when
// archive is true, on the simulation's clock.
func (f *fakeReddit) source(t testing.TB, archive bool, interval time.Duration, creds bool) *reddit.Source {
	cfg := reddit.Config{BaseURL: f.reddit.URL, UserAgent: "test", Interval: interval, Logger: quiet,
		Now: f.clock.Now, Sleep: f.clock.Sleep, KeylessPerMinute: f.keylessPerMinute}
	if archive {
		cfg.MirrorURL = f.arch.URL
	}
	if creds {
		// OAuth reads go to the same fake; its token endpoint is below.
		cfg.ClientID, cfg.ClientSecret, cfg.OAuthURL = "id", "secret", f.reddit.URL
		cfg.TokenURL = f.tokenURL(t)
	}
	src, err := reddit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (f *fakeReddit) tokenURL(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"access_token": "tok", "token_type": "bearer", "expires_in": 86400, "scope": "*"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
