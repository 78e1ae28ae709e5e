package reddit_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/logtest"
)

const crmPermalink = "https://www.reddit.com/r/smallbusiness/comments/1hx0a1/looking_for_a_crm_that_doesnt_suck/"

// The posts of the reddit fixtures as the source should return them:
// newest first, deleted and removed ones gone, entities undone.
var wantReddit = []ports.RedditPost{
	{
		Community: community, CreatedAt: time.Unix(1767225550, 0).UTC(),
		Post: core.Post{
			ExternalID: "t1_kq1c01", Author: "brisbane_bakes",
			Text:     "Try HubSpot's free tier > nothing. Works fine for us 👍",
			URL:      crmPermalink + "kq1c01/",
			Likes:    5,
			PostedAt: time.Unix(1767225550, 0).UTC(),
		},
	},
	{
		Community: community, CreatedAt: time.Unix(1767225500, 0).UTC(),
		Post: core.Post{
			ExternalID: "t3_1hx0a1", Author: "zurich_barista",
			Title:    "Looking for a CRM that doesn't suck — recommendations? ☕🙏",
			Text:     "We run a small café in Zürich & need something simple. Budget < 50€/month, bookings > 200 a week. Anything that isn't Salesforce?",
			URL:      crmPermalink,
			Likes:    42,
			Comments: 7,
			PostedAt: time.Unix(1767225500, 0).UTC(),
		},
	},
	{
		Community: community, CreatedAt: time.Unix(1767225200, 0).UTC(),
		Post: core.Post{
			ExternalID: "t3_1hx0a4", Author: "ledgerly_team",
			Title:    "We launched our invoicing tool — 日本語対応 too",
			URL:      "https://www.reddit.com/r/smallbusiness/comments/1hx0a4/we_launched_our_invoicing_tool/",
			Likes:    3,
			PostedAt: time.Unix(1767225200, 0).UTC(),
		},
	},
}

func TestReadAnonymous(t *testing.T) {
	c := newClock()
	srv, rec := serve(t, c, redditRoutes(t))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	got, err := readBoth(context.Background(), src, "SmallBusiness", since)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != core.SourceReddit {
		t.Errorf("source = %q, want reddit", got.Source)
	}
	if !reflect.DeepEqual(got.Posts, wantReddit) {
		t.Errorf("posts:\n got %+v\nwant %+v", got.Posts, wantReddit)
	}
	hits := rec.Hits()
	if want := []string{"/r/smallbusiness/new.json", "/r/smallbusiness/comments.json"}; !slices.Equal(rec.Paths(), want) {
		t.Fatalf("paths = %v, want %v", rec.Paths(), want)
	}
	for _, h := range hits {
		if h.Query.Get("limit") != "100" || h.Query.Get("raw_json") != "1" || h.Query.Has("after") {
			t.Errorf("%s query = %v", h.Path, h.Query)
		}
		if ua := h.Header.Get("User-Agent"); ua != userAgent {
			t.Errorf("%s User-Agent = %q", h.Path, ua)
		}
		if a := h.Header.Get("Authorization"); a != "" {
			t.Errorf("anonymous read sent Authorization %q", a)
		}
	}
	// Anonymous budget: 10 a minute, so the second request waits 6 s.
	if want := []time.Duration{6 * time.Second}; !slices.Equal(c.Sleeps(), want) {
		t.Errorf("sleeps = %v, want %v", c.Sleeps(), want)
	}
}

// tokenServer plays reddit's token endpoint and remembers the one token
// the OAuth host accepts.
type tokenServer struct {
	t     *testing.T
	clock *fakeClock

	mu       sync.Mutex
	issued   int
	valid    string
	issuedAt time.Time
}

func (ts *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || !ok || id != clientID || secret != clientSecret {
		ts.t.Errorf("token request: %s basic auth %v", r.Method, ok && id == clientID && secret == clientSecret)
		status(http.StatusUnauthorized, `{"message": "Unauthorized", "error": 401}`)(w, r)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		ts.t.Errorf("token request form = %v (%v)", r.PostForm, err)
	}
	if ua := r.Header.Get("User-Agent"); ua != userAgent {
		ts.t.Errorf("token request User-Agent = %q", ua)
	}
	ts.mu.Lock()
	ts.issued++
	ts.valid = fmt.Sprintf("tok-%d-%s", ts.issued, strings.Repeat("x", 20))
	ts.issuedAt = ts.clock.Now()
	tok := ts.valid
	ts.mu.Unlock()
	body := strings.Replace(string(fixture(ts.t, "token.json")), "eyJhbGciOiJSUzI1NiIsImtpZCI6IlNIQTI1NjpzS3dsMnlsV0VtMjVmcXhwTU40cWY4MXE2OWFFdWFyMnpLMUdhVGxjdWNZIiwidHlwIjoiSldUIn0.fixture", tok, 1)
	writeJSON(w, http.StatusOK, []byte(body))
}

func (ts *tokenServer) state() (issued int, valid string, at time.Time) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.issued, ts.valid, ts.issuedAt
}

func (ts *tokenServer) revoke() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.valid = "revoked"
}

// authorized lets through only requests with the current token.
func (ts *tokenServer) authorized(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, valid, _ := ts.state()
		if r.Header.Get("Authorization") != "bearer "+valid {
			status(http.StatusUnauthorized, `{"message": "Unauthorized", "error": 401}`)(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// oauthSetup starts reddit's www host (token endpoint only: with
// credentials nothing is read there) and its OAuth host.
func oauthSetup(t *testing.T, c *fakeClock, api http.Handler, keyless ...http.Handler) (*tokenServer, reddit.Config, *recorder) {
	ts := &tokenServer{t: t, clock: c}
	www := http.NewServeMux()
	www.Handle("/api/v1/access_token", ts)
	if len(keyless) > 0 {
		// OAuth refused: the keyless ways are tried next.
		www.Handle("/r/", keyless[0])
	}
	www.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("read %s from the keyless host while OAuth answers", r.URL.Path)
		http.NotFound(w, r)
	})
	wwwSrv, _ := serve(t, c, www)
	oauthSrv, rec := serve(t, c, ts.authorized(api))
	cfg := reddit.Config{BaseURL: wwwSrv.URL, OAuthURL: oauthSrv.URL, ClientID: clientID, ClientSecret: clientSecret}
	return ts, cfg, rec
}

func TestReadOAuth(t *testing.T) {
	c := newClock()
	logs := &logtest.Buffer{}
	ts, cfg, rec := oauthSetup(t, c, redditRoutes(t))
	src := newSource(t, c, logs, cfg)
	ctx := context.Background()

	read := func(step string) {
		t.Helper()
		got, err := readBoth(ctx, src, community, since)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got.Source != core.SourceReddit || !reflect.DeepEqual(got.Posts, wantReddit) {
			t.Fatalf("%s: got %s %v", step, got.Source, ids(got.Posts))
		}
	}
	lastAuth := func() string {
		h := rec.Hits()
		return h[len(h)-1].Header.Get("Authorization")
	}

	read("first read")
	issued, tok1, at := ts.state()
	if issued != 1 {
		t.Fatalf("tokens issued = %d, want 1", issued)
	}
	for _, h := range rec.Hits() {
		if h.Header.Get("Authorization") != "bearer "+tok1 || h.Header.Get("User-Agent") != userAgent {
			t.Errorf("%s: Authorization %q, User-Agent %q", h.Path, h.Header.Get("Authorization"), h.Header.Get("User-Agent"))
		}
	}

	read("second read")
	if issued, _, _ := ts.state(); issued != 1 {
		t.Errorf("token fetched again while valid: issued = %d", issued)
	}

	// The fixture's token lives 86400 s; it is replaced 60 s early.
	c.Set(at.Add(86400*time.Second - 61*time.Second))
	read("just before the early refresh")
	if issued, _, _ := ts.state(); issued != 1 {
		t.Errorf("token replaced more than 60 s early: issued = %d", issued)
	}
	c.Set(at.Add(86400*time.Second - 60*time.Second))
	read("at the early refresh")
	issued, tok2, _ := ts.state()
	if issued != 2 || lastAuth() != "bearer "+tok2 {
		t.Errorf("after expiry: issued = %d, last Authorization %q", issued, lastAuth())
	}

	// Reddit revokes the token: one 401, a fresh token, the same request again.
	ts.revoke()
	n := len(rec.Hits())
	read("after revocation")
	issued, tok3, _ := ts.state()
	if issued != 3 {
		t.Errorf("after a 401: issued = %d, want 3", issued)
	}
	hits := rec.Hits()[n:]
	if len(hits) != 3 || hits[0].Header.Get("Authorization") != "bearer "+tok2 ||
		hits[1].Header.Get("Authorization") != "bearer "+tok3 || hits[0].Path != hits[1].Path {
		t.Errorf("after revocation: %d requests", len(hits))
	}

	basic := base64.StdEncoding.EncodeToString([]byte(clientID + ":" + clientSecret))
	for _, secret := range []string{clientSecret, basic, tok1, tok2, tok3} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a credential reached the log:\n%s", logs.String())
		}
	}
}

// failures are the ways reddit fails that send a read to the archive.
func failures(t *testing.T) map[string]http.HandlerFunc {
	html := fixture(t, "blocked.html")
	return map[string]http.HandlerFunc{
		"403": status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`),
		"429": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "5")
			status(http.StatusTooManyRequests, `{"message": "Too Many Requests", "error": 429}`)(w, r)
		},
		"500":     status(http.StatusInternalServerError, `{"message": "Internal Server Error", "error": 500}`),
		"503":     status(http.StatusServiceUnavailable, `{"message": "Service Unavailable", "error": 503}`),
		"timeout": slow,
		"html block page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(html)
		},
	}
}

func TestFallbackToMirror(t *testing.T) {
	for name, fail := range failures(t) {
		for _, api := range []string{reddit.MirrorArcticShift, reddit.MirrorPullPush} {
			t.Run(name+"/"+api, func(t *testing.T) {
				t.Parallel()
				c := newClock()
				rsrv, rrec := serve(t, c, failingReddit(fail))
				msrv, mrec := serve(t, c, mirrorRoutes(t, api))
				src := newSource(t, c, nil, reddit.Config{
					BaseURL: rsrv.URL, MirrorURL: msrv.URL + "/", MirrorAPI: api,
					HTTPClient: &http.Client{Timeout: 300 * time.Millisecond},
				})

				got, err := readBoth(context.Background(), src, community, since)
				if err != nil {
					t.Fatal(err)
				}
				if got.Source != core.SourceMirror {
					t.Errorf("source = %q, want mirror", got.Source)
				}
				// The same fullnames as from reddit: a post is never new twice.
				if want := ids(wantReddit); !slices.Equal(ids(got.Posts), want) {
					t.Fatalf("ids = %v, want %v", ids(got.Posts), want)
				}
				for i, p := range got.Posts {
					w := wantReddit[i].Post
					if p.Post.Title != w.Title || p.Post.Text != w.Text || p.Post.Author != w.Author || !p.Post.PostedAt.Equal(w.PostedAt) || p.Community != community {
						t.Errorf("post %s:\n got %+v\nwant %+v", p.Post.ExternalID, p.Post, w)
					}
					if p.Post.ExternalID != "t1_kq1c01" && p.Post.URL != w.URL {
						t.Errorf("%s URL = %q", p.Post.ExternalID, p.Post.URL)
					}
				}
				// Arctic Shift's comments carry no permalink: it is built.
				wantURL := crmPermalink + "kq1c01/"
				if api == reddit.MirrorArcticShift {
					wantURL = "https://www.reddit.com/r/smallbusiness/comments/1hx0a1/comment/kq1c01/"
				}
				if u := got.Posts[0].Post.URL; u != wantURL {
					t.Errorf("comment URL = %q, want %q", u, wantURL)
				}

				// A refused way rests across reads: JSON and then the feeds
				// are asked once, and the comments go to the archive
				// without a request. A 429 rests the keyless budget, the
				// feeds too, until the time it names.
				want := []string{"/r/smallbusiness/new.json", "/r/smallbusiness/new/.rss"}
				if name == "429" {
					want = want[:1]
				}
				if p := rrec.Paths(); !slices.Equal(p, want) {
					t.Errorf("reddit requests = %v, want %v", p, want)
				}
				hits := mrec.Hits()
				if got, want := mrec.Paths(), mirrorPaths[api]; !slices.Equal(got, want[:]) {
					t.Fatalf("mirror paths = %v, want %v", got, want)
				}
				for _, h := range hits {
					q := h.Query
					size := "limit"
					if api == reddit.MirrorPullPush {
						size = "size"
					}
					if q.Get("subreddit") != community || q.Get("after") != strconv.FormatInt(since.Unix(), 10) ||
						q.Get(size) != "100" || q.Get("sort") != "asc" {
						t.Errorf("%s query = %v", h.Path, q)
					}
					for _, text := range []string{"q", "query", "title", "selftext", "body"} {
						if q.Has(text) {
							t.Errorf("%s asks the mirror's text search: %v", h.Path, q)
						}
					}
					if ua := h.Header.Get("User-Agent"); ua != userAgent {
						t.Errorf("%s User-Agent = %q", h.Path, ua)
					}
				}
			})
		}
	}
}

// failingNew serves reddit's listings with new.json failing by fail.
func failingNew(t *testing.T, fail http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /r/"+community+"/new.json", fail)
	mux.Handle("GET /r/"+community+"/comments.json", jsonFile(t, "listing_comments.json"))
	return mux
}

func TestMirrorFailure(t *testing.T) {
	cases := map[string]struct {
		mirror http.HandlerFunc
		reason string
	}{
		"status":       {status(http.StatusBadGateway, `{"error": "bad gateway"}`), "archive http 502"},
		"not JSON":     {func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>oops</html>")) }, "archive answer is not JSON"},
		"error answer": {status(http.StatusOK, `{"error": "Timeout. Maybe slow down a bit"}`), "archive answer is not a search result"},
		"timeout":      {slow, "archive timeout"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newClock()
			logs := &logtest.Buffer{}
			unavailable := status(http.StatusServiceUnavailable, `{"message": "Service Unavailable", "error": 503}`)
			ts, cfg, _ := oauthSetup(t, c, unavailable, unavailable)
			msrv, _ := serve(t, c, tc.mirror)
			cfg.MirrorURL = msrv.URL
			cfg.HTTPClient = &http.Client{Timeout: 300 * time.Millisecond}
			src := newSource(t, c, logs, cfg)

			_, err := readBoth(context.Background(), src, community, since)
			if !core.IsKind(err, core.KindUnavailable) {
				t.Fatalf("err = %v, want unavailable", err)
			}
			msg := core.Message(err)
			if !strings.Contains(msg, "reddit oauth: http 503, json: http 503, feed: http 503") || !strings.Contains(msg, tc.reason) {
				t.Errorf("message %q does not name both failures (%q)", msg, tc.reason)
			}
			_, tok, _ := ts.state()
			for _, secret := range []string{clientSecret, tok} {
				if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("a credential leaked: %v\n%s", err, logs.String())
				}
			}
		})
	}
}

func TestNoMirror(t *testing.T) {
	c := newClock()
	logs := &logtest.Buffer{}
	srv, rec := serve(t, c, failingReddit(status(http.StatusServiceUnavailable, `{"message": "Service Unavailable", "error": 503}`)))
	src := newSource(t, c, logs, reddit.Config{BaseURL: srv.URL})

	// The second read asks nothing: both ways rest, and still say why.
	want := []string{"json: http 503, feed: http 503", "json: http 503, feed: http 503"}
	for i := range 2 {
		_, err := readBoth(context.Background(), src, community, since)
		if !core.IsKind(err, core.KindUnavailable) || !strings.Contains(core.Message(err), "reddit "+want[i]+"; no archive set") {
			t.Fatalf("err = %v, want unavailable naming reddit's failure", err)
		}
	}
	// A refused way costs no request while it rests.
	if p, want := rec.Paths(), []string{"/r/smallbusiness/new.json", "/r/smallbusiness/new/.rss"}; !slices.Equal(p, want) {
		t.Errorf("reddit requests = %v, want %v", p, want)
	}
	// A way's refusal is logged when it starts, not at every read.
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("warnings = %d, want 2 (json, feed):\n%s", n, logs.String())
	}
}

func TestNotFound(t *testing.T) {
	c := newClock()
	srv, _ := serve(t, c, failingNew(t, status(http.StatusNotFound, `{"reason": "banned", "message": "Not Found", "error": 404}`)))
	msrv, mrec := serve(t, c, mirrorRoutes(t, reddit.MirrorArcticShift))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL, MirrorURL: msrv.URL})

	_, err := readBoth(context.Background(), src, community, since)
	if !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if n := len(mrec.Hits()); n != 0 {
		t.Errorf("mirror asked %d times about a community reddit does not have", n)
	}
}

func TestInvalidCommunity(t *testing.T) {
	c := newClock()
	srv, rec := serve(t, c, redditRoutes(t))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	for _, name := range []string{"", "r/golang", "../api/v1/me", "go lang", "a23456789012345678901x", "café"} {
		if _, err := readBoth(context.Background(), src, name, since); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Read(%q) err = %v, want invalid", name, err)
		}
	}
	if n := len(rec.Hits()); n != 0 {
		t.Errorf("%d requests for invalid names", n)
	}
}

func TestPagingStopsAtSince(t *testing.T) {
	c := newClock()
	mux := http.NewServeMux()
	pinned := selfPost("p0", t0-90_000)
	pinned["stickied"] = true
	pages := map[string][]byte{
		"":      listing(t, "t3_p2", pinned, selfPost("p1", t0-10), selfPost("p2", t0-20)),
		"t3_p2": listing(t, "t3_p4", selfPost("p3", t0-30), selfPost("p4", t0-2000)),
	}
	mux.HandleFunc("GET /r/"+community+"/new.json", func(w http.ResponseWriter, r *http.Request) {
		b, ok := pages[r.URL.Query().Get("after")]
		if !ok {
			t.Errorf("read on past since: after=%q", r.URL.Query().Get("after"))
		}
		writeJSON(w, http.StatusOK, b)
	})
	mux.HandleFunc("GET /r/"+community+"/comments.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, listing(t, ""))
	})
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	got, err := readBoth(context.Background(), src, community, since)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t3_p1", "t3_p2", "t3_p3"}; !slices.Equal(ids(got.Posts), want) {
		t.Errorf("ids = %v, want %v", ids(got.Posts), want)
	}
	var afters []string
	for _, h := range rec.Hits() {
		afters = append(afters, h.Path+"?after="+h.Query.Get("after"))
	}
	want := []string{"/r/smallbusiness/new.json?after=", "/r/smallbusiness/new.json?after=t3_p2", "/r/smallbusiness/comments.json?after="}
	if !slices.Equal(afters, want) {
		t.Errorf("requests = %v, want %v", afters, want)
	}
}

func TestPagingIsBounded(t *testing.T) {
	c := newClock()
	n := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/"+community+"/new.json", func(w http.ResponseWriter, r *http.Request) {
		n++ // one request at a time: the source reads sequentially
		id := "q" + strconv.Itoa(n)
		writeJSON(w, http.StatusOK, listing(t, "t3_"+id, selfPost(id, t0-int64(n))))
	})
	mux.HandleFunc("GET /r/"+community+"/comments.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, listing(t, "t1_more"))
	})
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	// A window far in the past: paging stops at the page cap.
	got, err := readBoth(context.Background(), src, community, time.Unix(t0-1_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Posts) != reddit.MaxPages {
		t.Errorf("posts = %d, want %d", len(got.Posts), reddit.MaxPages)
	}
	// The comments listing is empty but claims more: an empty page ends it.
	if hits := len(rec.Hits()); hits != reddit.MaxPages+1 {
		t.Errorf("requests = %d, want %d", hits, reddit.MaxPages+1)
	}

	// No since: only the newest page of each listing.
	before := len(rec.Hits())
	if _, err := readBoth(context.Background(), src, community, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if hits := len(rec.Hits()) - before; hits != 2 {
		t.Errorf("requests with a zero since = %d, want 2", hits)
	}
}

func TestLongAndNonASCIIText(t *testing.T) {
	c := newClock()
	long := selfPost("l1", t0-5)
	long["title"] = "naïve question: ¿dónde? 🙂 — 中文"
	long["selftext"] = strings.Repeat("é", core.MaxPostText+500) + "END"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/"+community+"/new.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, listing(t, "", long))
	})
	mux.HandleFunc("GET /r/"+community+"/comments.json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, listing(t, ""))
	})
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	got, err := readBoth(context.Background(), src, community, since)
	if err != nil || len(got.Posts) != 1 {
		t.Fatalf("Read = %v, %v", got, err)
	}
	p := got.Posts[0].Post
	if p.Title != "naïve question: ¿dónde? 🙂 — 中文" {
		t.Errorf("title = %q", p.Title)
	}
	// The whole text is kept for matching; the store cuts what a match
	// keeps at core.MaxPostText.
	if n := utf8.RuneCountInString(p.Text); n != core.MaxPostText+503 || !utf8.ValidString(p.Text) || !strings.HasSuffix(p.Text, "END") {
		t.Errorf("text: %d characters, valid %v", n, utf8.ValidString(p.Text))
	}
}

func TestRateLimitHeaders(t *testing.T) {
	t.Run("spent budget waits for reset", func(t *testing.T) {
		c := newClock()
		routes := redditRoutes(t)
		srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Ratelimit-Used", "10")
			w.Header().Set("X-Ratelimit-Remaining", "0.0")
			w.Header().Set("X-Ratelimit-Reset", "42")
			routes.ServeHTTP(w, r)
		}))
		src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
		if _, err := readBoth(context.Background(), src, community, since); err != nil {
			t.Fatal(err)
		}
		if want := []time.Duration{42 * time.Second}; !slices.Equal(c.Sleeps(), want) {
			t.Errorf("sleeps = %v, want %v", c.Sleeps(), want)
		}
		h := rec.Hits()
		if gap := h[1].At.Sub(h[0].At); gap != 42*time.Second {
			t.Errorf("second request %v after the first, want 42s", gap)
		}
	})

	t.Run("retry-after", func(t *testing.T) {
		c := newClock()
		var mu sync.Mutex
		refused := false
		routes := redditRoutes(t)
		srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			first := !refused
			refused = true
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "30")
				status(http.StatusTooManyRequests, `{"message": "Too Many Requests", "error": 429}`)(w, r)
				return
			}
			routes.ServeHTTP(w, r)
		}))
		msrv, mrec := serve(t, c, mirrorRoutes(t, reddit.MirrorArcticShift))
		src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL, MirrorURL: msrv.URL})

		// JSON answers 429: reddit rests until the pause it asked for,
		// the feeds too (one budget), and the archive covers the gap
		// without a wait.
		got, err := readBoth(context.Background(), src, community, since)
		if err != nil || got.Source != core.SourceMirror || !slices.Equal(got.Vias, []string{"archive", "archive"}) {
			t.Fatalf("first read: %v %v %v", got.Source, got.Vias, err)
		}
		if s := c.Sleeps(); len(s) != 0 {
			t.Errorf("sleeps = %v, want none", s)
		}
		// Once the pause is over, JSON is asked again.
		c.Set(c.Now().Add(30 * time.Second))
		got, err = readBoth(context.Background(), src, community, since)
		if err != nil || !slices.Equal(got.Vias, []string{"json", "json"}) {
			t.Fatalf("after the pause: %v %v", got.Vias, err)
		}
		if n := len(mrec.Hits()); n != 2 {
			t.Errorf("archive asked %d times, want 2 (posts and comments during the pause)", n)
		}
		if p := rec.Paths(); len(p) != 3 {
			t.Errorf("reddit requests = %v", p)
		}
	})

	t.Run("a wait past the deadline is not the archive", func(t *testing.T) {
		c := newClock()
		// Reddit answers, and says the budget is spent for an hour:
		// pacing, not a refusal.
		srv, rec := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Ratelimit-Remaining", "0")
			w.Header().Set("X-Ratelimit-Reset", "3600")
			writeJSON(w, http.StatusOK, listing(t, ""))
		}))
		msrv, mrec := serve(t, c, mirrorRoutes(t, reddit.MirrorPullPush))
		src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL, MirrorURL: msrv.URL, MirrorAPI: reddit.MirrorPullPush, Interval: 10 * time.Minute})
		for i := range 3 {
			_, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
				Want: []ports.RedditWant{{Community: community, Since: since}}, Deadline: c.Now().Add(5 * time.Minute)})
			if i == 0 {
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			if !core.IsKind(err, core.KindRateLimited) {
				t.Fatalf("read %d: %v, want rate limited", i, err)
			}
		}
		if n := len(rec.Hits()); n != 1 {
			t.Errorf("reddit requests = %d, want 1", n)
		}
		if n := len(mrec.Hits()); n != 0 {
			t.Errorf("the archive was read %d times because of pacing", n)
		}
		if s := c.Sleeps(); len(s) != 0 {
			t.Errorf("sleeps = %v, want none", s)
		}
	})
}

func TestPacingSpreadsReads(t *testing.T) {
	empty := func(t *testing.T) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, listing(t, "")) })
	}
	communities := []string{"smallbusiness", "golang", "cooking"}
	check := func(t *testing.T, c *fakeClock, rec *recorder, gap time.Duration) {
		t.Helper()
		want := slices.Repeat([]time.Duration{gap}, 2*len(communities)-1)
		if !slices.Equal(c.Sleeps(), want) {
			t.Errorf("sleeps = %v, want %v", c.Sleeps(), want)
		}
		h := rec.Hits()
		for i := 1; i < len(h); i++ {
			if d := h[i].At.Sub(h[i-1].At); d != gap {
				t.Errorf("request %d came %v after the one before, want %v", i, d, gap)
			}
		}
	}

	t.Run("anonymous", func(t *testing.T) {
		c := newClock()
		srv, rec := serve(t, c, empty(t))
		src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
		for _, name := range communities {
			if _, err := readBoth(context.Background(), src, name, since); err != nil {
				t.Fatal(err)
			}
		}
		check(t, c, rec, 6*time.Second)
	})

	t.Run("oauth", func(t *testing.T) {
		c := newClock()
		_, cfg, rec := oauthSetup(t, c, empty(t))
		src := newSource(t, c, nil, cfg)
		for _, name := range communities {
			if _, err := readBoth(context.Background(), src, name, since); err != nil {
				t.Fatal(err)
			}
		}
		check(t, c, rec, 600*time.Millisecond)
	})
}

func TestWaitHonoursContext(t *testing.T) {
	srv, _ := serve(t, newClock(), redditRoutes(t))
	msrv, mrec := serve(t, newClock(), mirrorRoutes(t, reddit.MirrorArcticShift))
	// The real clock and sleep: the second request must wait 6 s.
	src, err := reddit.New(reddit.Config{BaseURL: srv.URL, MirrorURL: msrv.URL, UserAgent: userAgent})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = readBoth(ctx, src, community, since)
	if !core.IsKind(err, core.KindUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want unavailable after the deadline", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Read took %v after its context ended", d)
	}
	if n := len(mrec.Hits()); n != 0 {
		t.Errorf("mirror read %d times after the caller gave up", n)
	}
}

func TestNewRejects(t *testing.T) {
	cases := map[string]reddit.Config{
		"id without secret": {ClientID: clientID},
		"secret without id": {ClientSecret: clientSecret},
		"unknown mirror":    {MirrorURL: "https://mirror.example", MirrorAPI: "pushshift"},
		"mirror not http":   {MirrorURL: "ftp://user:" + clientSecret + "@mirror.example"},
		"base not a URL":    {BaseURL: "www.reddit.com"},
	}
	for name, cfg := range cases {
		_, err := reddit.New(cfg)
		if !core.IsKind(err, core.KindInvalid) {
			t.Errorf("%s: err = %v, want invalid", name, err)
			continue
		}
		if strings.Contains(err.Error(), clientSecret) {
			t.Errorf("%s: error shows the secret: %v", name, err)
		}
	}
}

// Reddit says how much of its budget is left: the rest is spread over
// its window, so the next request waits Reset/Remaining, not the
// configured gap.
func TestRateLimitSpread(t *testing.T) {
	c := newClock()
	srv, _ := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// reddit's rate-limit headers on an answered listing
		w.Header().Set("X-Ratelimit-Remaining", "2.0")
		w.Header().Set("X-Ratelimit-Reset", "60")
		writeJSON(w, http.StatusOK, listing(t, ""))
	}))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	if _, err := readBoth(context.Background(), src, community, since); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{30 * time.Second}; !slices.Equal(c.Sleeps(), want) {
		t.Errorf("sleeps = %v, want %v", c.Sleeps(), want)
	}
}

// A private community answers 403 with reddit's JSON reason. That is the
// community's refusal, not a block of the address: it is not found, as
// reddit says why, and the other communities' reads are still asked of
// reddit. A 403 without a reason still rests the way (TestFallbackToMirror).
func TestPrivateCommunityDoesNotRestTheWaysOfOthers(t *testing.T) {
	c := newClock()
	private := status(http.StatusForbidden, `{"reason": "private", "message": "Forbidden", "error": 403}`)
	mux := redditRoutes(t)
	mux.Handle("GET /r/secretclub/", private)
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	_, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: "secretclub", Since: since}}})
	if !core.IsKind(err, core.KindNotFound) || !strings.Contains(err.Error(), "reddit says the community is private") {
		t.Fatalf("a private community's read: %v", err)
	}
	before := len(rec.Hits())
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: since}}})
	if err != nil || len(rec.Hits()) == before {
		t.Errorf("r/%s after a private community: %d requests, err %v, refused %+v", community, len(rec.Hits())-before, err, r.Refused)
	}
}
