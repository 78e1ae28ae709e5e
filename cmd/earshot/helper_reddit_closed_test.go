package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// privateReddit answers as reddit does while r/NAME is private: a 403
// with reddit's JSON reason for any request naming it, alone or in a
// group (/r/a+NAME/new.json), the shape adapters/reddit's
// TestPrivateCommunityDoesNotRestTheWaysOfOthers and helper/reddit's
// closed tests serve (privateAnswer). Other requests go to the listings
// of fakeRedditListings. paths records what reddit was asked for.
type privateReddit struct {
	*fakeRedditListings
	closed atomic.Bool
	mu     sync.Mutex
	paths  []string
}

func newPrivateReddit(t *testing.T, name string) *privateReddit {
	p := &privateReddit{fakeRedditListings: newFakeReddit(t)}
	p.closed.Store(true)
	listings := p.srv.Config.Handler
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.mu.Unlock()
		group := strings.Split(strings.Split(strings.TrimPrefix(r.URL.Path, "/r/"), "/")[0], "+")
		if r.Header.Get(helperVia) != "" && p.closed.Load() && slices.Contains(group, name) {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"reason": "private", "message": "Forbidden", "error": 403}`)
			return
		}
		listings.ServeHTTP(w, r) // fails the test for a request that went direct
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// asked returns the paths reddit was asked for since the i-th request.
func (p *privateReddit) asked(i int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths[i:]...)
}

// The built server and `earshot helper --once` as processes, reddit
// reached only through a real forward proxy: r/golang, r/sales and
// r/secretclub each have a phrase, and reddit refuses r/secretclub
// (private). The pass reads the other two, whose phrases show lastSource
// helper and a later lastCheckedAt; r/secretclub's phrase keeps its
// lastCheckedAt, and the account is not paused for it. A restarted
// helper finds it closed again with one split; once it reopens, the
// next helper's pass reads it, records its phrase as read, and its post
// is matched.
//
// The retry of a running helper a day later (reddit.ClosedRetry) is not
// taken here: the binary's reader has the system's clock and no setting
// to shorten it, and EARSHOT_HELPER_INTERVAL is at least a minute. That
// retry is tested in process by helper/reddit's
// TestClosedCommunityKeepsItsLastCheckedAtOnTheServer, which moves the
// reader's clock. What the binary does keep of a closed community is in
// memory, so each `--once` process is where it meets the community anew.
func TestHelperClosedRedditCommunityKeepsItsLastCheckedAt(t *testing.T) {
	t.Parallel()
	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	// Only the helper reads: the server's own reddit reader waits a day.
	s := start(t, "EARSHOT_PROXY_URL="+pu.String(), "EARSHOT_PLAN_PHRASES_PER_PLATFORM=10", "EARSHOT_REDDIT_INTERVAL=24h")
	communities := []string{"golang", "sales", "secretclub"}
	for _, c := range communities {
		s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": c}).want(t, 201, "")
	}
	// keywords is each community's phrase as GET /api/v1/keywords lists it.
	keywords := func() map[string]map[string]any {
		t.Helper()
		out := map[string]map[string]any{}
		for _, k := range listOf(t, s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, "")) {
			p := k.(map[string]any)
			out[fmt.Sprint(p["community"])] = p
		}
		if len(out) != len(communities) {
			t.Fatalf("keywords by community: %v", out)
		}
		return out
	}
	checkedAt := func(p map[string]any) float64 {
		t.Helper()
		at, ok := p["lastCheckedAt"].(float64)
		if !ok {
			t.Fatalf("lastCheckedAt of %v is not a number", p)
		}
		return at
	}
	before := keywords()

	reddit := newPrivateReddit(t, "secretclub")
	reddit.add("t3", "p1", "golang", "Any alternative to Acme?", "we need one", 1767225500)
	reddit.add("t3", "s1", "secretclub", "acme in the club", "members only", 1767225510)
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_HELPER_REDDIT_URL="+reddit.srv.URL, "EARSHOT_HELPER_REDDIT_PACE=1ms",
		"EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"))
	pass := func(what string) string {
		t.Helper()
		code, logs := runHelper(t, env, s.URL, s.IngestKey)
		if code != 0 {
			t.Fatalf("%s: earshot helper --once exited %d, want 0 (a closed community pauses nothing):\n%s", what, code, logs)
		}
		if reddit.direct.Load() != 0 {
			t.Fatalf("%s: %d requests reached reddit without the proxy", what, reddit.direct.Load())
		}
		return logs
	}
	// warned reports whether logs warn of r/secretclub with reddit's reason.
	warned := func(logs string) bool {
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "community=r/secretclub") && strings.Contains(l, "reason=private") {
				return true
			}
		}
		return false
	}

	logs := pass("closed")
	// The group is refused whole, so it is read one community at a time
	// for the listing it was refused on (docs/helper.md): at most the
	// group's size in extra requests, through the proxy.
	asked := reddit.asked(0)
	if len(asked) > 2+len(communities) || int(forwarded.Load()) != len(asked) || !slices.Contains(asked, "/r/secretclub/new.json") {
		t.Errorf("reddit was asked %v, %d through the proxy; want the group, then each community alone, all through the proxy", asked, forwarded.Load())
	}
	if !warned(logs) {
		t.Errorf("the helper did not warn of r/secretclub and reddit's reason:\n%s", logs)
	}
	after := keywords()
	for _, c := range []string{"golang", "sales"} {
		if after[c]["lastSource"] != "helper" || checkedAt(after[c]) <= checkedAt(before[c]) {
			t.Errorf("r/%s, read: %v (before %v); want lastSource helper and a later lastCheckedAt", c, after[c], before[c])
		}
	}
	if p := after["secretclub"]; p["lastSource"] == "helper" || checkedAt(p) != checkedAt(before["secretclub"]) {
		t.Errorf("r/secretclub, refused: %v (before %v); want it as it was", p, before["secretclub"])
	}
	// The readable community's post was ingested and matched.
	waitForMatch(t, s, "/r/golang/comments/p1/t/")

	// Restarted while it is still private: the new process knows nothing
	// of it, finds it again with one split, and still names it unread.
	n := len(reddit.asked(0))
	logs = pass("still closed")
	if !warned(logs) || !slices.Contains(reddit.asked(n), "/r/secretclub/new.json") {
		t.Errorf("the restarted helper did not find r/secretclub closed again; asked %v:\n%s", reddit.asked(n), logs)
	}
	if p := keywords()["secretclub"]; p["lastSource"] == "helper" || checkedAt(p) != checkedAt(before["secretclub"]) {
		t.Errorf("r/secretclub, refused again: %v (before %v); want it as it was", p, before["secretclub"])
	}

	// Reopened: the next pass reads the three together and records
	// r/secretclub's phrase as read, its post read from where it stopped.
	reddit.closed.Store(false)
	n = len(reddit.asked(0))
	logs = pass("reopened")
	if warned(logs) {
		t.Errorf("the helper warned of r/secretclub after it reopened:\n%s", logs)
	}
	if asked := reddit.asked(n); len(asked) != 2 || !strings.Contains(asked[0], "secretclub") {
		t.Errorf("reopened, reddit was asked %v; want the group's two listings", asked)
	}
	if p := keywords()["secretclub"]; p["lastSource"] != "helper" || checkedAt(p) <= checkedAt(before["secretclub"]) {
		t.Errorf("r/secretclub, reopened and read: %v (before %v); want lastSource helper and a later lastCheckedAt", p, before["secretclub"])
	}
	waitForMatch(t, s, "/r/secretclub/comments/s1/t/")
}

// waitForMatch waits until the owner's inbox holds a match of the post
// whose link ends in suffix: matching follows the ingest's answer.
func waitForMatch(t *testing.T, s *instance, suffix string) {
	t.Helper()
	var last []any
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool {
		last = listOf(t, s.call("GET", "/api/v1/matches?limit=100", s.APIKey, nil).want(t, 200, ""))
		for _, m := range last {
			post, _ := m.(map[string]any)["post"].(map[string]any)
			if strings.HasSuffix(fmt.Sprint(post["url"]), suffix) {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("no match of a post at ...%s; the inbox holds %v", suffix, last) })
}
