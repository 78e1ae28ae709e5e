package reddit_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// earshotFake answers the helper endpoints in the shapes the server's
// adapters/httpapi sends (docs/helpers.md): GET /proxy's
// {required, proxy:{server,username,password}} or 503 with the error
// body, GET /phrases' {platform, phrases, items}, GET /session's jar or
// 404, POST /ingest's {accountId, ingested, skipped} skipping posts it
// has, POST /account-status' account view.
type earshotFake struct {
	srv *httptest.Server

	mu         sync.Mutex
	proxy      *helper.ProxyInfo // nil answers 503
	phrases    []helper.Phrase
	jar        string // "" answers 404
	posts      map[string]helper.Post
	batches    int
	ingestFail int // the next ingests answer 500
	reports    []helper.Signal
	countOnly  bool       // keep no posts (benchmarks)
	unread     [][]string // each batch's unreadCommunities, in order
	received   int        // posts in every batch, repeats included
}

func newEarshot(t testing.TB) *earshotFake {
	f := &earshotFake{posts: map[string]helper.Post{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func errorBody(code, msg string) map[string]any {
	return map[string]any{"error": map[string]string{"code": code, "message": msg}}
}

func (f *earshotFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer svc_ingest_test" {
		writeJSON(w, 401, errorBody("unauthorized", "the ingest key is missing, unknown or revoked"))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method + " " + r.URL.Path {
	case "GET /proxy":
		if f.proxy == nil {
			writeJSON(w, 503, errorBody("service_unavailable", "this deployment has no proxy: the helper must stop"))
			return
		}
		writeJSON(w, 200, f.proxy)
	case "GET /phrases":
		texts := make([]string, len(f.phrases))
		for i, p := range f.phrases {
			texts[i] = p.Phrase
		}
		writeJSON(w, 200, map[string]any{"platform": r.URL.Query().Get("platform"), "phrases": texts, "items": f.phrases})
	case "GET /session":
		if f.jar == "" {
			writeJSON(w, 404, errorBody("not_found", "no session stored for reddit"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, f.jar)
	case "POST /ingest":
		if f.ingestFail > 0 {
			f.ingestFail--
			writeJSON(w, 500, errorBody("internal", "internal error"))
			return
		}
		var req struct {
			Platform string        `json:"platform"`
			Posts    []helper.Post `json:"posts"`
			Unread   []string      `json:"unreadCommunities"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Posts) > 100 {
			writeJSON(w, 400, errorBody("invalid_parameter", "bad batch"))
			return
		}
		f.batches++
		f.unread = append(f.unread, req.Unread)
		f.received += len(req.Posts)
		in := 0
		for _, p := range req.Posts {
			if f.countOnly {
				in++
				continue
			}
			if _, ok := f.posts[p.ExternalID]; !ok {
				f.posts[p.ExternalID] = p
				in++
			}
		}
		writeJSON(w, 200, map[string]any{"accountId": "acc1", "ingested": in, "skipped": len(req.Posts) - in})
	case "POST /account-status":
		var s helper.Signal
		json.NewDecoder(r.Body).Decode(&s)
		f.reports = append(f.reports, s)
		// What core/health makes of reddit's answers, in short.
		view := map[string]any{"accountId": "acc1", "platform": s.Platform, "state": "healthy", "issue": nil, "action": "none", "requiresAction": false}
		switch {
		case s.Status == 401 || strings.Contains(s.Location, "login"):
			view["state"], view["issue"], view["action"], view["requiresAction"] = "action_required", "session_expired", "reconnect", true
		case s.Status == 429:
			view["state"], view["issue"], view["action"] = "degraded", "rate_limited", "wait"
		case s.NoResponse || s.Status >= 500:
			view["state"], view["issue"], view["action"] = "degraded", "network_error", "wait"
		}
		writeJSON(w, 200, view)
	default:
		writeJSON(w, 404, errorBody("not_found", "no such route"))
	}
}

func (f *earshotFake) set(fn func(f *earshotFake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *earshotFake) snapshot() (posts map[string]helper.Post, reports []helper.Signal, batches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	posts = map[string]helper.Post{}
	for k, v := range f.posts {
		posts[k] = v
	}
	return posts, append([]helper.Signal(nil), f.reports...), f.batches
}

// viaHeader is what the test proxy adds to every request it forwards:
// the fake reddit refuses a request without it, so a request that went
// direct fails the test.
const viaHeader = "X-Test-Forwarded-By-Proxy"

// forwardProxy is a real forward proxy on loopback: it takes requests in
// absolute form, checks the credentials, and forwards them.
type forwardProxy struct {
	srv       *httptest.Server
	forwarded atomic.Int64
	refused   atomic.Int64
}

func newProxy(t testing.TB, user, pass string) *forwardProxy {
	p := &forwardProxy{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL = pr.In.URL // the absolute address the client asked for
		pr.Out.Header.Set(viaHeader, "1")
		pr.Out.Header.Del("Proxy-Authorization")
	}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != want || !r.URL.IsAbs() {
			p.refused.Add(1)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
		p.forwarded.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *forwardProxy) info(required bool) *helper.ProxyInfo {
	i := &helper.ProxyInfo{Required: required}
	i.Proxy.Server, i.Proxy.Username, i.Proxy.Password = p.srv.URL, "op", "s3cret"
	return i
}

// redditFake answers /r/NAME/new.json and /r/NAME/comments.json in
// reddit's Listing JSON, the shape of adapters/reddit/testdata's
// listing_new.json and listing_comments.json (taken from reddit's
// www.reddit.com/r/NAME/new.json and comments.json answers).
type redditFake struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	things   map[string][]thing // listing → things, newest first
	answer   func(w http.ResponseWriter, r *http.Request) bool
	requests []*http.Request
	cookies  []string
}

type thing struct {
	kind, id, sub, title, text string
	created                    float64
}

func newReddit(t testing.TB) *redditFake {
	f := &redditFake{t: t, things: map[string][]thing{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *redditFake) add(listing string, th thing) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.things[listing] = append([]thing{th}, f.things[listing]...)
}

func (f *redditFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(viaHeader) == "" {
		f.t.Errorf("reddit got %s without passing the proxy", r.URL)
		http.Error(w, "direct", http.StatusTeapot)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, r)
	f.cookies = append(f.cookies, r.Header.Get("Cookie"))
	answer := f.answer
	f.mu.Unlock()
	if answer != nil && answer(w, r) {
		return
	}
	// /r/a+b/new.json
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/r/"), "/")
	if len(parts) != 2 {
		http.NotFound(w, r)
		return
	}
	subs := strings.Split(parts[0], "+")
	listing := strings.TrimSuffix(parts[1], ".json")
	f.mu.Lock()
	var children []map[string]any
	for _, th := range f.things[listing] {
		if !contains(subs, th.sub) {
			continue
		}
		children = append(children, th.child())
	}
	f.mu.Unlock()
	if children == nil {
		children = []map[string]any{}
	}
	writeJSON(w, 200, map[string]any{"kind": "Listing", "data": map[string]any{"after": nil, "dist": len(children), "children": children}})
}

// child is the thing as a listing's child.
func (th thing) child() map[string]any {
	data := map[string]any{"id": th.id, "name": th.kind + "_" + th.id, "author": "ada", "subreddit": th.sub,
		"score": 3, "created_utc": th.created, "removed_by_category": nil, "stickied": false}
	if th.kind == "t3" {
		data["title"], data["selftext"], data["num_comments"] = th.title, th.text, 1
		data["permalink"] = fmt.Sprintf("/r/%s/comments/%s/x/", th.sub, th.id)
	} else {
		data["body"], data["link_id"] = th.text, "t3_p1"
		data["permalink"] = fmt.Sprintf("/r/%s/comments/p1/x/%s/", th.sub, th.id)
	}
	return map[string]any{"kind": th.kind, "data": data}
}

func (f *redditFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
