package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/testkit/logtest"
	"github.com/earshothq/earshot/testkit/proxytest"
)

// docs/helper.md followed as a new owner reads it: the key kept in
// ~/.config/earshot/helper.key, the helper run with only the server and
// that file, every platform the owner has phrases on read through the
// operator's proxy, and the checkpoints kept in the config directory.

// Sites under RFC 2606's .invalid names: no resolver knows them, so a
// request that reaches one came through the proxy, which joins every
// request to docsSites.
const (
	docsReddit   = "www.reddit.invalid"
	docsX        = "x.invalid"
	docsFacebook = "www.facebook.invalid"
)

// docsSites answers as each platform by the Host a request names,
// the proxy's hop marked as loopProxy marks it: reddit by newFakeReddit
// (reddit's Listing JSON), x and facebook by the pages and answers of
// TestHelperBrowserEndToEnd, whose fixtures' origins are stated there
// and in helper/x/testdata and helper/facebook/testdata's README.md.
// Anything else answers as reddit, for a test that names the site by
// its loopback address.
func docsSites(t *testing.T, reddit http.Handler) (*httptest.Server, func() []string) {
	t.Helper()
	timeline := xSearchTimeline(t)
	fbSearch, err := os.ReadFile(fbSearchAnswer)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		mu.Lock()
		if len(paths) < 1000 {
			paths = append(paths, host+r.URL.Path)
		}
		mu.Unlock()
		r.Header.Set(helperVia, "1")
		switch {
		case host == docsX && r.URL.Path == "/search":
			writeHTML(w, http.StatusOK, xSearchPage)
		case host == docsX && strings.HasSuffix(r.URL.Path, "/SearchTimeline"):
			timeline(w, r)
		case host == docsFacebook && r.URL.Path == "/search/posts/":
			writeHTML(w, http.StatusOK, fbSearchPage)
		case host == docsFacebook && r.URL.Path == "/api/graphql/" && r.Method == http.MethodPost:
			facebookGraphQL(w, r, fbSearch)
		case host == docsX || host == docsFacebook:
			http.NotFound(w, r)
		default:
			reddit.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}
}

// docsHome is a home directory as the docs leave it: the key in
// ~/.config/earshot/helper.key, written by the panel's command
// (`cat >` keeps the pasted line's newline), readable by its owner only.
// It returns the environment that makes it the helper's home.
func docsHome(t *testing.T, key string) (home string, env []string) {
	home = t.TempDir()
	dir := filepath.Join(home, ".config", "earshot")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "helper.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range baseEnv(home) {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return home, append(env, "HOME="+home)
}

// Section 3's command, with the sites' addresses of the table (for
// tests and mirrors) and the paces they allow: every platform the owner
// has phrases on, through the operator's proxy, the checkpoints in
// earshot/helper-state.json of the config directory, nothing of the
// session in them, and the key nowhere in the log.
func TestHelperDocsQuickStart(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil && os.Getenv("EARSHOT_TEST_BROWSER") == "" {
		t.Skipf("no Chromium at %s: the helper's browser readers are not run", browser.DefaultExecPath)
	}
	reddit := newFakeReddit(t)
	reddit.add("t3", "p1", "golang", "Any alternative to Acme?", "we need one", 1767225500)
	reddit.add("t1", "c1", "golang", "", "acme works for us", 1767225550)
	sites, paths := docsSites(t, reddit.srv.Config.Handler)
	proxy := proxytest.NewConnect(t, sites.Listener.Addr().String())
	s := start(t, "EARSHOT_PROXY_URL=http://op:s3cret@"+proxy.Addr())
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "earshot", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme grinder", "platform": "facebook"}).want(t, 201, "")
	jars := t.TempDir()
	for p, jar := range map[string]string{
		"x":        `[{"name":"auth_token","value":"xsecrettoken","domain":".x.com"},{"name":"ct0","value":"xsecretcsrf","domain":".x.com"}]`,
		"facebook": `[{"name":"c_user","value":"1000","domain":".facebook.com"},{"name":"xs","value":"fbsecretsession","domain":".facebook.com"}]`,
	} {
		f := filepath.Join(jars, p+".json")
		os.WriteFile(f, []byte(jar), 0o600)
		s.mustAdmin("session", "set", "--owner", s.OwnerID, "--platform", p, "--file", f)
	}

	home, env := docsHome(t, s.IngestKey)
	env = append(env, "EARSHOT_HELPER_SERVER="+s.URL, "EARSHOT_HELPER_KEY_FILE="+filepath.Join(home, ".config/earshot/helper.key"),
		"EARSHOT_HELPER_REDDIT_URL=http://"+docsReddit, "EARSHOT_HELPER_X_URL=http://"+docsX, "EARSHOT_HELPER_FACEBOOK_URL=http://"+docsFacebook,
		"EARSHOT_HELPER_REDDIT_PACE=1ms", "EARSHOT_HELPER_X_PACE=50ms", "EARSHOT_HELPER_FACEBOOK_PACE=50ms",
		// The table: 0 searches no group beyond facebook's posts search.
		"EARSHOT_HELPER_FACEBOOK_GROUPS=0")
	code, logs := helperProcess(t, env, "--once")
	if code != 0 {
		t.Fatalf("earshot helper --once exited %d:\n%s", code, logs)
	}
	if strings.Contains(logs, s.IngestKey) || strings.Contains(logs, strings.TrimPrefix(s.IngestKey, "svc_ingest_")) {
		t.Fatalf("the helper logged its key:\n%s", logs)
	}
	for _, h := range []string{docsReddit, docsX, docsFacebook} {
		if !slices.Contains(proxy.Hosts(), h) {
			t.Errorf("the proxy was not asked for %s: %v", h, proxy.Hosts())
		}
	}
	for _, p := range paths() {
		if strings.Contains(p, "/groups/") {
			t.Errorf("with EARSHOT_HELPER_FACEBOOK_GROUPS=0 the helper read %s", p)
		}
	}
	for _, k := range listOf(t, s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, "")) {
		if p := k.(map[string]any); p["lastSource"] != "helper" {
			t.Errorf("%s on %s: lastSource %v, want helper", p["phrase"], p["platform"], p["lastSource"])
		}
	}
	xs, fbs, _ := waitPlatformMatches(t, s, 2, 3)
	if xs < 2 || fbs < 3 {
		t.Errorf("%d x matches, %d facebook matches; want the 2 of x's first page and facebook's 3", xs, fbs)
	}

	state, err := os.ReadFile(filepath.Join(home, ".config", "earshot", "helper-state.json"))
	if err != nil {
		t.Fatalf("no checkpoints where the docs keep them: %v", err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(state, &all); err != nil || len(all[s.URL]) == 0 {
		t.Fatalf("the state file holds no checkpoints for %s (%v):\n%s", s.URL, err, state)
	}
	for _, secret := range []string{"xsecrettoken", "xsecretcsrf", "fbsecretsession", s.IngestKey} {
		if strings.Contains(string(state), secret) {
			t.Errorf("the state file holds %q:\n%s", secret, state)
		}
	}
}

// Left running, as the systemd unit runs it, the helper makes a pass,
// waits EARSHOT_HELPER_INTERVAL, and exits 0 when SIGINT or SIGTERM
// stops it: the unit's Restart=on-failure then leaves it stopped.
func TestHelperDocsRunsUntilStopped(t *testing.T) {
	t.Parallel()
	reddit := newFakeReddit(t)
	sites, _ := docsSites(t, reddit.srv.Config.Handler)
	proxy := proxytest.NewConnect(t, sites.Listener.Addr().String())
	s := start(t, "EARSHOT_PROXY_URL=http://"+proxy.Addr())
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	home, env := docsHome(t, s.IngestKey)
	env = append(env, "EARSHOT_HELPER_SERVER="+s.URL, "EARSHOT_HELPER_KEY_FILE="+filepath.Join(home, ".config/earshot/helper.key"),
		"EARSHOT_HELPER_REDDIT_URL=http://"+docsReddit, "EARSHOT_HELPER_REDDIT_PACE=1ms", "EARSHOT_HELPER_INTERVAL=1m")
	read := regexp.MustCompile(`msg=read platform=reddit`)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(binary, "helper")
		cmd.Env = env
		logs := &logtest.Buffer{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !poll(60*time.Second, 20*time.Millisecond, func() bool { return read.MatchString(logs.String()) }) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("no pass read reddit within 60s:\n%s", logs)
		}
		select {
		case err := <-done:
			t.Fatalf("the helper ended after its first pass (%v), want it to wait the interval:\n%s", err, logs)
		default:
		}
		_ = cmd.Process.Signal(sig)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("stopped by %v, the helper exited with %v, want 0:\n%s", sig, err, logs)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the helper did not stop within 30s of %v", sig)
		}
		if !strings.Contains(logs.String(), "msg=stopped") {
			t.Errorf("stopped by %v, the helper did not say so:\n%s", sig, logs)
		}
	}
}

// EARSHOT_HELPER_DIRECT, as the table has it: false reads through the
// proxy even where the deployment's GET /proxy says required: false;
// true reads from the owner's own address there, and exits 4 where the
// deployment requires its proxy.
func TestHelperDocsDirect(t *testing.T) {
	t.Parallel()
	reddit := newFakeReddit(t)
	reddit.add("t3", "p1", "golang", "Any alternative to Acme?", "we need one", 1767225500)
	sites, _ := docsSites(t, reddit.srv.Config.Handler)
	proxy := proxytest.NewConnect(t, sites.Listener.Addr().String())
	optional := start(t, "EARSHOT_PROXY_URL=http://"+proxy.Addr(), "EARSHOT_PROXY_REQUIRED=false")
	required := start(t, "EARSHOT_PROXY_URL=http://"+proxy.Addr())
	for _, s := range []*instance{optional, required} {
		s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	}
	run := func(s *instance, direct string) (int, string) {
		t.Helper()
		_, env := docsHome(t, s.IngestKey)
		env = append(env, "EARSHOT_HELPER_SERVER="+s.URL, "EARSHOT_HELPER_KEY="+s.IngestKey,
			"EARSHOT_HELPER_REDDIT_URL="+sites.URL, "EARSHOT_HELPER_REDDIT_PACE=1ms")
		if direct != "" {
			env = append(env, "EARSHOT_HELPER_DIRECT="+direct)
		}
		return helperProcess(t, env, "--once")
	}
	if code, logs := run(optional, ""); code != 0 || len(proxy.Hosts()) != 2 {
		t.Fatalf("by default the helper exited %d and asked the proxy %d times, want 0 and 2:\n%s", code, len(proxy.Hosts()), logs)
	}
	if code, logs := run(optional, "true"); code != 0 || len(proxy.Hosts()) != 2 {
		t.Fatalf("direct where allowed, the helper exited %d and asked the proxy %d times, want 0 and 2 (none more):\n%s", code, len(proxy.Hosts()), logs)
	}
	if code, logs := run(required, "true"); code != exitNoProxy || len(proxy.Hosts()) != 2 {
		t.Fatalf("direct where the proxy is required, the helper exited %d and asked the proxy %d times, want %d and 2:\n%s",
			code, len(proxy.Hosts()), exitNoProxy, logs)
	}
}

// `earshot helper -h` names every setting of docs/helper.md's table,
// with both flags the docs give it, and its exit statuses say what the
// docs say: 4 also when EARSHOT_HELPER_DIRECT meets a deployment that
// requires its proxy, 5 also when --challenge has no session to save.
func TestHelperDocsHelp(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/helper.md")
	if err != nil {
		t.Fatal(err)
	}
	code, help := helperProcess(t, baseEnv(t.TempDir()), "-h")
	if code != 0 {
		t.Fatalf("earshot helper -h exited %d:\n%s", code, help)
	}
	var rows []string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "| `EARSHOT_HELPER_") {
			rows = append(rows, l)
		}
	}
	names := regexp.MustCompile("`(EARSHOT_HELPER_[A-Z_]+)`")
	seen := 0
	for _, row := range rows {
		for _, m := range names.FindAllStringSubmatch(strings.SplitN(row, "|", 3)[1], -1) {
			seen++
			v := m[1]
			if !strings.Contains(help, v) {
				t.Errorf("-h does not name %s", v)
			}
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v, "EARSHOT_")), "_", "-")
			want := []string{flag, strings.TrimPrefix(flag, "helper-")}
			if v == "EARSHOT_HELPER_KEY" {
				want = want[:1] // "its one flag, --helper-key"
			}
			for _, f := range want {
				if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `\b`).MatchString(help) {
					t.Errorf("-h lists no flag -%s for %s", f, v)
				}
			}
		}
	}
	if seen < 15 {
		t.Fatalf("found %d settings in docs/helper.md's table", seen)
	}
	// The paragraph after "Exit status:", one status a clause.
	para, _, _ := strings.Cut(help[strings.Index(help, "Exit status:")+1:], "\n\n")
	status := func(n string) string {
		for _, c := range strings.Split(strings.Join(strings.Fields(para), " "), ";") {
			if c = strings.TrimSpace(c); strings.HasPrefix(c, n+" ") {
				return c
			}
		}
		return ""
	}
	if s := status("4"); !strings.Contains(s, "EARSHOT_HELPER_DIRECT") {
		t.Errorf("-h's exit status 4 does not say it is also a direct read the deployment refuses: %q", s)
	}
	if s := status("5"); !strings.Contains(s, "--challenge") {
		t.Errorf("-h's exit status 5 does not say --challenge exits so when it saves nothing: %q", s)
	}
}

// "Solving a challenge": `earshot helper --challenge x` whose window
// ends (Enter) without a signed-in session saves nothing and exits 5.
// The site is x's login page as far as it matters: it sets a visitor's
// cookie (guest_id, which x sets before any sign-in) and no session.
// The browser runs headless here; not parallel, as it sets the
// package's stdin and headless switch.
func TestHelperDocsChallengeWithoutSession(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if browserRequired() {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", chromiumPath)
		}
		t.Skipf("no Chromium at %s: browser test skipped", chromiumPath)
	}
	login := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "guest_id", Value: "v1%3A1", Path: "/"})
		writeHTML(w, http.StatusOK, "<html><body>Sign in to X</body></html>")
		select {
		case login <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(site.Close)
	proxy := proxytest.NewConnect(t, site.Listener.Addr().String())
	s := start(t, "EARSHOT_PROXY_URL=http://"+proxy.Addr())

	logs, err := challengeX(t, s, "http://"+docsX, login, "the sign-in page")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitAccountOwner || !strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("without a session the challenge ended with %v, want exit status %d saying nothing was saved\n%s", err, exitAccountOwner, logs)
	}
	if !slices.Contains(proxy.Hosts(), docsX) {
		t.Errorf("the window did not go through the proxy: %v", proxy.Hosts())
	}
	s.call("GET", "/session?platform=x", s.IngestKey, nil).want(t, 404, "not_found")
}
