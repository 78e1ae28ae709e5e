package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/webhooktest"
)

// The helper end to end: the built server, `earshot helper --once` as a
// process, and a fake reddit reached only through a real forward proxy
// on loopback.

const helperVia = "X-Test-Forwarded-By-Proxy"

// loopProxy is a forward proxy: requests in absolute form, with the
// operator's credentials, forwarded with a header the fake reddit
// insists on.
func loopProxy(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("op:s3cret"))
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL = pr.In.URL
		pr.Out.Header.Set(helperVia, "1")
		pr.Out.Header.Del("Proxy-Authorization")
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != want || !r.URL.IsAbs() {
			// A browser answers the challenge only when it names its scheme.
			w.Header().Set("Proxy-Authenticate", `Basic realm="earshot-test"`)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
		n.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// fakeRedditListings answers /r/NAME/new.json and comments.json in
// reddit's Listing JSON (the shape of adapters/reddit/testdata's
// listing_new.json and listing_comments.json, taken from reddit).
type fakeRedditListings struct {
	mu       sync.Mutex
	children map[string][]map[string]any // listing → newest first
	direct   atomic.Int64
	srv      *httptest.Server
}

func newFakeReddit(t *testing.T) *fakeRedditListings {
	f := &fakeRedditListings{children: map[string][]map[string]any{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(helperVia) == "" {
			f.direct.Add(1)
			t.Errorf("reddit got %s without passing the proxy", r.URL)
			http.Error(w, "direct", http.StatusTeapot)
			return
		}
		listing := strings.TrimSuffix(filepath.Base(r.URL.Path), ".json")
		f.mu.Lock()
		body, _ := json.Marshal(map[string]any{"kind": "Listing", "data": map[string]any{"after": nil, "children": f.children[listing]}})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRedditListings) add(kind, id, sub, title, text string, created int64) {
	data := map[string]any{"id": id, "name": kind + "_" + id, "author": "ada", "subreddit": sub, "score": 2,
		"created_utc": float64(created), "removed_by_category": nil}
	listing := "comments"
	if kind == "t3" {
		listing = "new"
		data["title"], data["selftext"], data["num_comments"] = title, text, 0
		data["permalink"] = fmt.Sprintf("/r/%s/comments/%s/t/", sub, id)
	} else {
		data["body"], data["link_id"] = text, "t3_p1"
		data["permalink"] = fmt.Sprintf("/r/%s/comments/p1/t/%s/", sub, id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.children[listing] = append([]map[string]any{{"kind": kind, "data": data}}, f.children[listing]...)
}

// runHelper runs `earshot helper --once` against server and returns its
// exit status and stderr.
func runHelper(t *testing.T, env []string, server, key string, extra ...string) (int, string) {
	t.Helper()
	env = append(append(append([]string{}, env...), "EARSHOT_HELPER_SERVER="+server, "EARSHOT_HELPER_KEY="+key), extra...)
	return helperProcess(t, env, "--once")
}

// helperProcess runs `earshot helper args...` with env and returns its
// exit status and stderr.
func helperProcess(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"helper"}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// xSearchTimeline answers x's SearchTimeline as x does a search with
// one page of results: xSearchAnswer first, then xSearchEnd for the
// cursor it names.
func xSearchTimeline(t *testing.T) http.HandlerFunc {
	t.Helper()
	answer, err := os.ReadFile(xSearchAnswer)
	if err != nil {
		t.Fatal(err)
	}
	end, err := os.ReadFile(xSearchEnd)
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if xCursor(r) == "" {
			w.Write(answer)
		} else {
			w.Write(end)
		}
	}
}

func TestHelperEndToEnd(t *testing.T) {
	t.Parallel()
	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	s := start(t, "EARSHOT_PROXY_URL="+pu.String(), "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	_, rcv := hook(t, s, s.APIKey, map[string]any{"min_score": 0})

	reddit := newFakeReddit(t)
	reddit.add("t3", "p1", "golang", "Any alternative to Acme?", "we need one", 1767225500)
	reddit.add("t1", "c1", "golang", "", "acme works for us", 1767225550)
	reddit.add("t3", "p0", "golang", "unrelated", "nothing here", 1767225400)
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_HELPER_REDDIT_URL="+reddit.srv.URL, "EARSHOT_HELPER_REDDIT_PACE=1ms",
		"EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"))

	code, logs := runHelper(t, env, s.URL, s.IngestKey)
	if code != 0 {
		t.Fatalf("earshot helper --once exited %d:\n%s", code, logs)
	}
	if strings.Contains(logs, s.IngestKey) {
		t.Fatalf("the helper logged its key:\n%s", logs)
	}
	if forwarded.Load() != 2 || reddit.direct.Load() != 0 {
		t.Fatalf("proxy forwarded %d requests, %d went direct; want 2 and 0", forwarded.Load(), reddit.direct.Load())
	}
	// Scored matches, delivered, in the inbox.
	msgs := rcv.WaitFor(2, 20*time.Second)
	var bodies []string
	for _, m := range msgs {
		bodies = append(bodies, string(m.Body))
	}
	all := strings.Join(bodies, "\n")
	if !strings.Contains(all, `/r/golang/comments/p1/t/"`) || !strings.Contains(all, `/r/golang/comments/p1/t/c1/"`) {
		t.Errorf("webhook messages do not carry both the post and the comment:\n%s", all)
	}
	matches := scoredMatches(t, s, rcv, 2)
	for _, m := range matches {
		if m["score"] == nil {
			t.Errorf("match not scored: %v", m)
		}
	}
	kw := listOf(t, s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, ""))
	if p := kw[0].(map[string]any); p["lastSource"] != "helper" {
		t.Errorf("the phrase's lastSource is %v, want helper", p["lastSource"])
	}

	// Killed mid-batch, after the server stored the batch and before the
	// answer came: restarted, it sends the batch again; nothing is lost,
	// nothing doubled.
	reddit.add("t3", "p2", "golang", "acme for teams?", "asking", 1767225600)
	reddit.add("t1", "c2", "golang", "", "acme again", 1767225650)
	stored := make(chan struct{}, 1)
	hold := make(chan struct{})
	target, _ := url.Parse(s.URL)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(rec, r)
		if r.URL.Path == "/ingest" {
			select {
			case stored <- struct{}{}:
			default:
			}
			<-hold // the answer never comes
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(hold) }) // before front.Close, which waits for the held answer
	cmd := exec.Command(binary, "helper", "--once")
	cmd.Env = append(append([]string{}, env...), "EARSHOT_HELPER_SERVER="+front.URL, "EARSHOT_HELPER_KEY="+s.IngestKey)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stored:
	case <-time.After(60 * time.Second):
		t.Fatal("the helper sent no batch")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if code, logs := runHelper(t, env, s.URL, s.IngestKey); code != 0 {
		t.Fatalf("the restarted helper exited %d:\n%s", code, logs)
	}
	matches = scoredMatches(t, s, rcv, 4)
	seen := map[string]int{}
	for _, m := range matches {
		post, _ := m["post"].(map[string]any)
		seen[fmt.Sprint(post["url"])]++
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s matched %d times", u, n)
		}
	}
	if len(seen) != 4 {
		t.Errorf("matches after the restart: %v", seen)
	}

	// A revoked key stops the helper with its exit status and says why.
	list := strings.Split(s.mustAdmin("ingest-key", "list", "--owner", s.OwnerID), "\n")
	for _, l := range list[1:] {
		s.mustAdmin("ingest-key", "revoke", "--owner", s.OwnerID, "--id", strings.Fields(l)[0])
	}
	code, logs = runHelper(t, env, s.URL, s.IngestKey)
	if code != exitKeyRefused || !strings.Contains(logs, "refused the ingest key") || strings.Contains(logs, s.IngestKey) {
		t.Fatalf("with a revoked key the helper exited %d, want %d with a clear message:\n%s", code, exitKeyRefused, logs)
	}
}

// GET /proxy answering 503 stops the helper before it reads anything.
func TestHelperStopsWithoutAProxy(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	reddit := newFakeReddit(t)
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_HELPER_REDDIT_URL="+reddit.srv.URL, "EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"))
	code, logs := runHelper(t, env, s.URL, s.IngestKey)
	if code != exitNoProxy || !strings.Contains(logs, "no proxy") || reddit.direct.Load() != 0 {
		t.Fatalf("without a proxy the helper exited %d, want %d:\n%s", code, exitNoProxy, logs)
	}
	code, logs = runHelper(t, env, s.URL, "")
	if code != exitSettings {
		t.Fatalf("without a key the helper exited %d, want %d:\n%s", code, exitSettings, logs)
	}
}

// scoredMatches waits for the webhook messages of n deliveries to rcv,
// each queued in the transaction that stores a match's first score, and
// then reads the inbox once: it must hold n matches, every one scored.
// A delivery sent twice counts once.
func scoredMatches(t *testing.T, s *instance, rcv *webhooktest.Receiver, n int) []map[string]any {
	t.Helper()
	var msgs []webhooktest.Message
	for deliveries := map[string]bool{}; len(deliveries) < n; {
		more := rcv.WaitFor(len(msgs)+1, 20*time.Second)
		if len(more) == len(msgs) {
			t.Fatalf("webhook messages of %d deliveries, want %d", len(deliveries), n)
		}
		msgs = more
		for _, m := range msgs {
			deliveries[m.DeliveryID] = true
		}
	}
	var out []map[string]any
	scored := 0
	for _, m := range listOf(t, s.call("GET", "/api/v1/matches?limit=100", s.APIKey, nil).want(t, 200, "")) {
		mm := m.(map[string]any)
		out = append(out, mm)
		if mm["score"] != nil {
			scored++
		}
	}
	if len(out) != n || scored != n {
		t.Fatalf("inbox holds %d matches, %d scored; want %d", len(out), scored, n)
	}
	return out
}
