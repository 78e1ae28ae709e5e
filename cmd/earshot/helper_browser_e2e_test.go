package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// The helper's browser readers end to end: the built server, `earshot
// helper --once` as a process reading x in Chromium through a forward
// proxy on loopback, a fake x that turns to its checkpoint and back.

// xSearchAnswer is x's web client's GraphQL SearchTimeline answer:
// helper/x/testdata/search_timeline.json (its origin is in
// helper/x/testdata/README.md: the shape open-source clients such as
// twscrape decode), two posts that say "earshot", and the Bottom cursor
// DAACCgACGdy of the next page; xSearchPage2 is that next page (two
// older posts that say it), xSearchEnd the page past the last result.
const (
	xSearchAnswer = "../../helper/x/testdata/search_timeline.json"
	xSearchPage2  = "../../helper/x/testdata/search_timeline_page2.json"
	xSearchEnd    = "../../helper/x/testdata/search_timeline_end.json"
)

// xSearchPage is the part of x's search page that matters: a document
// whose script asks SearchTimeline, as x's web client does, shows the
// tweets, and asks the next page with the Bottom cursor when it is
// scrolled to its end.
const xSearchPage = `<!doctype html><html><head><title>Search / X</title></head><body style="margin:0"><div id="react-root"></div>
<script>
const q = new URLSearchParams(location.search).get("q");
let cursor = null, loading = false, more = true;
function load() {
  loading = true;
  const v = {rawQuery: q, count: 20, product: "Latest"};
  if (cursor) v.cursor = cursor;
  fetch("/i/api/graphql/nK1dw4oV3k4w5TdtcAdSww/SearchTimeline?variables=" + encodeURIComponent(JSON.stringify(v)), {credentials: "include"})
    .then(r => r.json()).then(j => {
      let n = 0;
      for (const i of j.data.search_by_raw_query.search_timeline.timeline.instructions) {
        for (const e of (i.entries || []).concat(i.entry ? [i.entry] : [])) {
          if (e.content.cursorType === "Bottom") { cursor = e.content.value; continue; }
          const a = document.createElement("article");
          a.style.height = "1000px";
          a.textContent = e.entryId;
          document.getElementById("react-root").appendChild(a);
          n++;
        }
      }
      more = n > 0;
      loading = false;
    });
}
load();
addEventListener("scroll", () => {
  if (more && !loading && innerHeight + scrollY >= document.body.scrollHeight - 200) load();
});
</script></body></html>`

// xCursor is the cursor a SearchTimeline request asks with, "" for the
// first page.
func xCursor(r *http.Request) string {
	var v struct{ Cursor string }
	json.Unmarshal([]byte(r.URL.Query().Get("variables")), &v)
	return v.Cursor
}

// xAccessPage is x's /account/access: Arkose Labs' FunCaptcha in place
// of the timeline.
const xAccessPage = `<!doctype html><html><head><title>X</title>
<script src="https://client-api.arkoselabs.com/v2/2CB16598-CB82-4CF7-B332-5990DB66F3AB/api.js"></script></head>
<body><div id="arkose_iframe" data-funcaptcha="1">Verify you are human</div></body></html>`

// fbSearchAnswer is facebook's web client's /api/graphql/ answer to
// SearchCometResultsInitialResultsQuery: helper/facebook/testdata's
// search_posts.txt, whose origin its README.md states.
const fbSearchAnswer = "../../helper/facebook/testdata/search_posts.txt"

// fbJoinsPage is facebook's /groups/joins/, the groups the owner joined
// in its HTML: helper/facebook/testdata/groups_joins.html (its origin in
// that folder's README.md); the first, Home Baristas
// (1242309506256283), answers its search with fbGroupAnswer, that
// folder's group_search.txt, a post the posts search does not show.
const (
	fbJoinsPage   = "../../helper/facebook/testdata/groups_joins.html"
	fbGroupAnswer = "../../helper/facebook/testdata/group_search.txt"
)

// fbGroupSearchPage is a group's /groups/ID/search/ as far as it
// matters: its script asks /api/graphql/ for the group's results.
const fbGroupSearchPage = `<!DOCTYPE html><html id="facebook"><body><script>
fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=GroupsCometSearchResultsQuery&group=%s'});
</script></body></html>`

// fbSearchPage is facebook's /search/posts/ as far as it matters: its
// script asks /api/graphql/ for the page's chrome, then for the results.
const fbSearchPage = `<!DOCTYPE html><html id="facebook"><body><div id="results"></div><script>
fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=CometNotificationsBadgeCountQuery'})
  .then(() => fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=SearchCometResultsInitialResultsQuery'}))
  .then(r => r.text()).then(t => { document.getElementById('results').textContent = t.length; });
</script></body></html>`

// watchProfiles watches dir until stop closes and returns how many
// browser profiles it saw and the most present at once.
func watchProfiles(dir string, stop <-chan struct{}) [2]int {
	seen := map[string]bool{}
	most := 0
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		now, _ := filepath.Glob(filepath.Join(dir, "earshot-browser-*"))
		for _, p := range now {
			seen[p] = true
		}
		most = max(most, len(now))
		select {
		case <-stop:
			return [2]int{len(seen), most}
		case <-tick.C:
		}
	}
}

// waitPlatformMatches polls the inbox until it holds at least wantX
// scored x matches and wantFB facebook ones, and returns both counts and
// the addresses of the scored matches' posts.
func waitPlatformMatches(t *testing.T, s *instance, wantX, wantFB int) (int, int, map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		xs, fbs := 0, 0
		scored := map[string]bool{}
		for _, m := range listOf(t, s.call("GET", "/api/v1/matches?limit=100", s.APIKey, nil).want(t, 200, "")) {
			mm := m.(map[string]any)
			post, _ := mm["post"].(map[string]any)
			u := fmt.Sprint(post["url"])
			if mm["score"] != nil {
				scored[u] = true
			}
			switch {
			case mm["score"] == nil:
			case strings.Contains(u, "x.com/"):
				xs++
			case strings.Contains(u, "facebook.com/"):
				fbs++
			}
		}
		if (xs >= wantX && fbs >= wantFB) || time.Now().After(deadline) {
			return xs, fbs, scored
		}
		<-tick.C
	}
}

func TestHelperBrowserEndToEnd(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil && os.Getenv("EARSHOT_TEST_BROWSER") == "" {
		t.Skipf("no Chromium at %s: the helper's browser readers are not run", browser.DefaultExecPath)
	}
	answer, err := os.ReadFile(xSearchAnswer)
	if err != nil {
		t.Fatal(err)
	}
	page2, err := os.ReadFile(xSearchPage2)
	if err != nil {
		t.Fatal(err)
	}
	end, err := os.ReadFile(xSearchEnd)
	if err != nil {
		t.Fatal(err)
	}
	var checkpoint atomic.Bool
	var answerNow atomic.Value
	answerNow.Store(answer)
	var direct atomic.Int64
	fakeX := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(helperVia) == "" {
			direct.Add(1)
			http.Error(w, "not through the proxy", http.StatusBadGateway)
			return
		}
		switch {
		case r.URL.Path == "/search" && checkpoint.Load():
			http.Redirect(w, r, "/account/access", http.StatusFound)
		case r.URL.Path == "/search":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, xSearchPage)
		case strings.HasSuffix(r.URL.Path, "/SearchTimeline"):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			switch xCursor(r) {
			case "":
				w.Write(answerNow.Load().([]byte))
			case "DAACCgACGdy":
				w.Write(page2)
			default:
				w.Write(end)
			}
		case r.URL.Path == "/account/access":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, xAccessPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fakeX.Close)
	fbSearch, err := os.ReadFile(fbSearchAnswer)
	if err != nil {
		t.Fatal(err)
	}
	fbJoins, err := os.ReadFile(fbJoinsPage)
	if err != nil {
		t.Fatal(err)
	}
	fbGroup, err := os.ReadFile(fbGroupAnswer)
	if err != nil {
		t.Fatal(err)
	}
	fakeFB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(helperVia) == "" {
			direct.Add(1)
			http.Error(w, "not through the proxy", http.StatusBadGateway)
			return
		}
		group := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/groups/"), "/search/")
		switch {
		case r.URL.Path == "/search/posts/":
			writeHTML(w, http.StatusOK, fbSearchPage)
		case r.URL.Path == "/groups/joins/":
			writeHTML(w, http.StatusOK, string(fbJoins))
		case strings.HasPrefix(r.URL.Path, "/groups/") && strings.HasSuffix(r.URL.Path, "/search/"):
			writeHTML(w, http.StatusOK, fmt.Sprintf(fbGroupSearchPage, group))
		case r.URL.Path == "/api/graphql/" && r.Method == http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			switch b := string(body); {
			case strings.Contains(b, "group=1242309506256283"):
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write(fbGroup)
			case strings.Contains(b, "GroupsCometSearchResultsQuery"):
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, `{"data":{"node":{"__typename":"Group","id":"880011223344556","name":"Espresso Nerds","group_feed":{"edges":[]}}}}`)
			default:
				r.Body = io.NopCloser(bytes.NewReader(body))
				facebookGraphQL(w, r, fbSearch)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fakeFB.Close)

	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_PROXY_URL="+pu.String(), "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true",
		"EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "earshot", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme grinder", "platform": "facebook"}).want(t, 201, "")
	fbJar := filepath.Join(t.TempDir(), "fb.json")
	os.WriteFile(fbJar, []byte(`[{"name":"c_user","value":"1000","domain":".facebook.com"},{"name":"xs","value":"s3","domain":".facebook.com"}]`), 0o600)
	s.mustAdmin("session", "set", "--owner", s.OwnerID, "--platform", "facebook", "--file", fbJar)
	_, rcv := hook(t, s, s.APIKey, map[string]any{"min_score": 0})
	setJar := func(token string) {
		jar := filepath.Join(t.TempDir(), "jar.json")
		os.WriteFile(jar, []byte(`[{"name":"auth_token","value":"`+token+`","domain":".x.com"},{"name":"ct0","value":"c`+token+`","domain":".x.com"}]`), 0o600)
		s.mustAdmin("session", "set", "--owner", s.OwnerID, "--platform", "x", "--file", jar)
	}
	setJar("tok-1")

	dir := t.TempDir()
	// The helper's temporary directory holds each browser's profile
	// (earshot-browser-*) while that browser runs.
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	// The paces are short against the fakes, which the settings allow
	// with the sites' addresses set.
	env := append(baseEnv(dir), "TMPDIR="+tmp, "EARSHOT_HELPER_X_URL="+fakeX.URL, "EARSHOT_HELPER_FACEBOOK_URL="+fakeFB.URL,
		"EARSHOT_HELPER_PLATFORMS=x,facebook", "EARSHOT_HELPER_STATE="+filepath.Join(dir, "state.json"),
		"EARSHOT_HELPER_X_PACE=50ms", "EARSHOT_HELPER_FACEBOOK_PACE=50ms")

	// Posts that say the owner's phrases, on x (the first page of the
	// search and the second, read by scrolling) and facebook (the posts
	// search and the search of a group the owner joined), read in one
	// browser: scored, delivered, in the inbox.
	stop := make(chan struct{})
	watched := make(chan [2]int)
	go func() { watched <- watchProfiles(tmp, stop) }()
	code, logs := runHelper(t, env, s.URL, s.IngestKey)
	close(stop)
	if w := <-watched; w[0] != 1 || w[1] != 1 {
		t.Errorf("reading x and facebook started %d browsers, at most %d at once; want one", w[0], w[1])
	}
	if code != 0 {
		t.Fatalf("earshot helper --once exited %d:\n%s", code, logs)
	}
	if forwarded.Load() == 0 || direct.Load() != 0 {
		t.Fatalf("proxy forwarded %d requests, %d reached x or facebook directly", forwarded.Load(), direct.Load())
	}
	rcv.WaitFor(3, 20*time.Second)
	xMatches, fbMatches, scored := waitPlatformMatches(t, s, 4, 4)
	if xMatches != 4 || fbMatches != 4 {
		t.Fatalf("%d x matches (want 4: two pages), %d facebook matches (want 4: three from the posts search, one from a group)", xMatches, fbMatches)
	}
	if !scored["https://x.com/linus_t/status/1860000000000000012"] {
		t.Errorf("the x post of the search's second page is not a scored match: %v", scored)
	}
	if !scored["https://www.facebook.com/groups/1242309506256283/posts/1995955427558351/"] {
		t.Errorf("the post of the joined group's search is not a scored match: %v", scored)
	}

	// x turns to its checkpoint: action_required, open_challenge, one
	// email over two passes.
	checkpoint.Store(true)
	for range 2 {
		if code, logs := runHelper(t, env, s.URL, s.IngestKey); code != exitAccountOwner {
			t.Fatalf("at x's checkpoint the helper exited %d, want %d:\n%s", code, exitAccountOwner, logs)
		}
	}
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	_, _, page := c.get("/app/accounts")
	if i := strings.Index(page, `id="acct-x"`); i < 0 || !strings.Contains(page[i:min(len(page), i+4000)], "action_required") ||
		!strings.Contains(page[i:min(len(page), i+4000)], "open_challenge") {
		t.Fatalf("x on the Accounts page is not action_required with open_challenge:\n%s", page)
	}
	smtp.WaitFor(1, 10*time.Second)

	// The owner clears the checkpoint on x, replaces the session and marks
	// the challenge resolved (only that clears a challenge: docs/helpers.md);
	// x answers again, with a new post.
	checkpoint.Store(false)
	answerNow.Store(bytes.ReplaceAll(answer, []byte("1861000000000000002"), []byte("1861000000000000009")))
	setJar("tok-2")
	acct := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 200}).want(t, 200, "").JSON(t)["accountId"].(string)
	if code, _, body := c.post("/app/accounts/"+acct+"/resolve", nil); code >= 400 {
		t.Fatalf("marking x resolved answered %d:\n%s", code, body)
	}
	if code, logs := runHelper(t, env, s.URL, s.IngestKey); code != 0 {
		t.Fatalf("after the session was replaced the helper exited %d:\n%s", code, logs)
	}
	if xm, _, _ := waitPlatformMatches(t, s, 5, fbMatches); xm != 5 {
		t.Fatalf("%d x matches after reading resumed, want 5", xm)
	}
	alerts := 0
	for _, m := range smtp.Messages() {
		if strings.Contains(m.Subject, "needs you") {
			alerts++
		}
	}
	if alerts != 1 {
		t.Errorf("%d emails about the checkpoint, want 1 (two passes met it)", alerts)
	}
}

// writeHTML answers a fake site's page.
func writeHTML(w http.ResponseWriter, code int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, page)
}

// facebookGraphQL answers the fake facebook page's /api/graphql/ calls:
// the search query gets search, anything else an empty viewer.
func facebookGraphQL(w http.ResponseWriter, r *http.Request, search []byte) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/html; charset=utf-8") // as facebook labels them
	if strings.Contains(string(body), "SearchCometResultsInitialResultsQuery") {
		w.Write(search)
		return
	}
	io.WriteString(w, `{"data":{"viewer":{"notifications_unseen_count":0}}}`)
}
