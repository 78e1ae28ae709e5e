package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/helper/browser"
)

// The built server and `earshot helper --once` as processes, x read in
// Chromium through a real forward proxy on loopback: the owner listens
// for "earshot" and "zebra" on x. The pass searches "earshot" (the
// fixture's posts, xSearchAnswer), then x sends the search for "zebra"
// to its checkpoint (/account/access, xAccessPage) and the pass stops.
// Its batch of earshot's posts names zebra unread (unreadPhrases):
// earshot's phrase shows a later lastCheckedAt, zebra's keeps its own
// (an x phrase's lastSource is helper from the start), as a reddit community reddit refused
// does (TestHelperClosedRedditCommunityKeepsItsLastCheckedAt).
func TestHelperStoppedXPassKeepsTheUnsearchedPhrasesLastCheckedAt(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil && os.Getenv("EARSHOT_TEST_BROWSER") == "" {
		t.Skipf("no Chromium at %s: the helper's browser readers are not run", browser.DefaultExecPath)
	}
	timeline := xSearchTimeline(t)
	var direct atomic.Int64
	var mu sync.Mutex
	var searched []string
	fakeX := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(helperVia) == "" {
			direct.Add(1)
			http.Error(w, "not through the proxy", http.StatusBadGateway)
			return
		}
		switch {
		case r.URL.Path == "/search":
			mu.Lock()
			searched = append(searched, r.URL.Query().Get("q"))
			mu.Unlock()
			if r.URL.Query().Get("q") == "zebra" {
				http.Redirect(w, r, "/account/access", http.StatusFound)
				return
			}
			writeHTML(w, http.StatusOK, xSearchPage)
		case strings.HasSuffix(r.URL.Path, "/SearchTimeline"):
			timeline(w, r)
		case r.URL.Path == "/account/access":
			writeHTML(w, http.StatusOK, xAccessPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fakeX.Close)

	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	s := start(t, "EARSHOT_PROXY_URL="+pu.String(), "EARSHOT_PLAN_PHRASES_PER_PLATFORM=10")
	for _, p := range []string{"earshot", "zebra"} {
		s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": p, "platform": "x"}).want(t, 201, "")
	}
	// keywords is each phrase as GET /api/v1/keywords lists it.
	keywords := func() map[string]map[string]any {
		t.Helper()
		out := map[string]map[string]any{}
		for _, k := range listOf(t, s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, "")) {
			p := k.(map[string]any)
			out[fmt.Sprint(p["phrase"])] = p
		}
		if len(out) != 2 {
			t.Fatalf("keywords by phrase: %v", out)
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
	jar := filepath.Join(t.TempDir(), "jar.json")
	os.WriteFile(jar, []byte(`[{"name":"auth_token","value":"tok-1","domain":".x.com"},{"name":"ct0","value":"ctok-1","domain":".x.com"}]`), 0o600)
	s.mustAdmin("session", "set", "--owner", s.OwnerID, "--platform", "x", "--file", jar)

	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_HELPER_X_URL="+fakeX.URL, "EARSHOT_HELPER_PLATFORMS=x",
		"EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"), "EARSHOT_HELPER_X_PACE=50ms")
	code, logs := runHelper(t, env, s.URL, s.IngestKey)
	if code != exitAccountOwner {
		t.Fatalf("at x's checkpoint the helper exited %d, want %d:\n%s", code, exitAccountOwner, logs)
	}
	mu.Lock()
	got := strings.Join(searched, ",")
	mu.Unlock()
	if got != "earshot,zebra" || forwarded.Load() == 0 || direct.Load() != 0 {
		t.Fatalf("x searched %q, %d requests through the proxy, %d around it; want earshot then zebra, all through it", got, forwarded.Load(), direct.Load())
	}
	// earshot's posts were sent, and matched.
	waitForMatch(t, s, "/status/1861000000000000002")
	after := keywords()
	if p := after["earshot"]; checkedAt(p) <= checkedAt(before["earshot"]) {
		t.Errorf("earshot, searched: %v (before %v); want a later lastCheckedAt", p, before["earshot"])
	}
	if p := after["zebra"]; checkedAt(p) != checkedAt(before["zebra"]) {
		t.Errorf("zebra, sent to the checkpoint: %v (before %v); want it as it was", p, before["zebra"])
	}
}
