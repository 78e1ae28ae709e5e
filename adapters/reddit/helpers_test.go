package reddit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

const (
	community    = "smallbusiness"
	t0           = 1767225600 // 2026-01-01T00:00:00Z; the fixtures' posts are made just before it
	userAgent    = "server:earshot:test (by /u/earshot_test)"
	clientID     = "cl1ent-id"
	clientSecret = "s3cret-never-shown"
)

// since is older than every post of the fixtures.
var since = time.Unix(t0-1000, 0).UTC()

// fakeClock is the source's clock: it moves only when the source sleeps
// or a test moves it, and it records every sleep.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newClock() *fakeClock { return &fakeClock{now: time.Unix(t0, 0).UTC()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// hit is one request a test server received.
type hit struct {
	Path   string
	Query  url.Values
	Header http.Header
	At     time.Time // on the fake clock
}

type recorder struct {
	clock *fakeClock
	mu    sync.Mutex
	hits  []hit
}

func (r *recorder) Hits() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func (r *recorder) Paths() []string {
	var out []string
	for _, h := range r.Hits() {
		out = append(out, h.Path)
	}
	return out
}

// serve starts a loopback test server that records every request.
func serve(t *testing.T, c *fakeClock, h http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{clock: c}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.hits = append(rec.hits, hit{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: c.Now()})
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func jsonFile(t testing.TB, name string) http.HandlerFunc {
	b := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, b) }
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { writeJSON(w, code, []byte(body)) }
}

// slow answers only after the client has given up.
func slow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// redditRoutes answers both listings of community with the fixtures, as
// JSON and as Atom feeds.
func redditRoutes(t testing.TB) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /r/"+community+"/new.json", jsonFile(t, "listing_new.json"))
	mux.Handle("GET /r/"+community+"/comments.json", jsonFile(t, "listing_comments.json"))
	mux.Handle("GET /r/"+community+"/new/.rss", atomFile(t, "feed_new.xml"))
	mux.Handle("GET /r/"+community+"/comments/.rss", atomFile(t, "feed_comments.xml"))
	return mux
}

func atomFile(t testing.TB, name string) http.HandlerFunc {
	b := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
		_, _ = w.Write(b)
	}
}

// failingReddit answers every read of community, JSON or feed, with fail.
func failingReddit(fail http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /r/"+community+"/", fail)
	return mux
}

// both is what reading both listings of one community found.
type both struct {
	Posts  []ports.RedditPost
	Source core.Source
	Vias   []string
}

// readBoth reads the posts and then the comments of one community, as a
// cycle does, and merges them newest first.
func readBoth(ctx context.Context, src *reddit.Source, name string, since time.Time) (both, error) {
	var out both
	out.Source = core.SourceReddit
	for _, l := range ports.RedditListings {
		r, err := src.Read(ctx, ports.RedditQuery{Listing: l, Want: []ports.RedditWant{{Community: name, Since: since}}})
		if err != nil {
			return both{}, err
		}
		out.Posts = append(out.Posts, r.Posts...)
		out.Vias = append(out.Vias, r.Via)
		if r.Source == core.SourceMirror {
			out.Source = core.SourceMirror
		}
	}
	slices.SortStableFunc(out.Posts, func(a, b ports.RedditPost) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Post.ExternalID, a.Post.ExternalID)
	})
	return out, nil
}

// mirrorPaths are the post and comment search paths of each mirror API.
var mirrorPaths = map[string][2]string{
	reddit.MirrorArcticShift: {"/api/posts/search", "/api/comments/search"},
	reddit.MirrorPullPush:    {"/reddit/search/submission/", "/reddit/search/comment/"},
}

// mirrorRoutes answers one mirror API's searches with its fixtures.
func mirrorRoutes(t testing.TB, api string) *http.ServeMux {
	files := map[string][2]string{
		reddit.MirrorArcticShift: {"arcticshift_posts.json", "arcticshift_comments.json"},
		reddit.MirrorPullPush:    {"pullpush_submissions.json", "pullpush_comments.json"},
	}[api]
	mux := http.NewServeMux()
	mux.Handle("GET "+mirrorPaths[api][0], jsonFile(t, files[0]))
	mux.Handle("GET "+mirrorPaths[api][1], jsonFile(t, files[1]))
	return mux
}

// newSource builds a Source on the fake clock. logs may be nil.
func newSource(t *testing.T, c *fakeClock, logs io.Writer, cfg reddit.Config) *reddit.Source {
	t.Helper()
	if cfg.UserAgent == "" {
		cfg.UserAgent = userAgent
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	if c != nil {
		cfg.Now, cfg.Sleep = c.Now, c.Sleep
	}
	if logs == nil {
		logs = io.Discard
	}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := reddit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listing renders reddit's Listing JSON around things.
func listing(t testing.TB, after string, things ...map[string]any) []byte {
	t.Helper()
	children := []map[string]any{}
	for _, th := range things {
		kind := "t3"
		if _, ok := th["body"]; ok {
			kind = "t1"
		}
		children = append(children, map[string]any{"kind": kind, "data": th})
	}
	var a any
	if after != "" {
		a = after
	}
	b, err := json.Marshal(map[string]any{
		"kind": "Listing",
		"data": map[string]any{"after": a, "before": nil, "dist": len(things), "modhash": "", "children": children},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// selfPost is a post as reddit lists it, made at unix second created.
func selfPost(id string, created int64) map[string]any {
	return map[string]any{
		"id": id, "name": "t3_" + id, "author": "author_" + id, "title": "title " + id,
		"selftext": "text " + id, "subreddit": community, "subreddit_name_prefixed": "r/" + community,
		"permalink": "/r/" + community + "/comments/" + id + "/title/", "score": 1, "num_comments": 0,
		"created_utc": float64(created), "removed_by_category": nil, "stickied": false,
	}
}

// minutely is n self posts, named prefix and their number, one a minute
// back from t0, newest first as reddit lists them.
func minutely(prefix string, n int) []map[string]any {
	var out []map[string]any
	for i := range n {
		out = append(out, selfPost(fmt.Sprintf("%s%04d", prefix, i), t0-60*int64(i)))
	}
	return out
}

func ids(posts []ports.RedditPost) []string {
	out := []string{}
	for _, p := range posts {
		out = append(out, p.Post.ExternalID)
	}
	return out
}
