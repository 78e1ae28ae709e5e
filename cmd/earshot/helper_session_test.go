package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// An x jar in the canonical shape GET /session hands back
// (core.EncodeCookieJar).
const staleXJar = `[{"domain":".x.com","name":"auth_token","value":"stale-auth","path":"/","secure":true,"httpOnly":true},` +
	`{"domain":".x.com","name":"ct0","value":"stale-ct0","path":"/","secure":true}]`

// PUT /session on the built server: the ingest key stores the owner's
// jar, GET /session hands it back, the answer carries no cookie value,
// and an API key is refused.
func TestHelperPutSessionEndToEnd(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.call("PUT", "/session?platform=x", s.APIKey, staleXJar).want(t, 401, "unauthorized")
	r := s.call("PUT", "/session?platform=x", s.IngestKey, staleXJar).want(t, 200, "")
	var out map[string]any
	if err := json.Unmarshal(r.Body, &out); err != nil || out["platform"] != "x" || out["cookies"] != float64(2) || out["accountId"] == "" ||
		strings.Contains(string(r.Body), "stale-") {
		t.Fatalf("PUT /session answered %s", r.Body)
	}
	if got := s.call("GET", "/session?platform=x", s.IngestKey, nil).want(t, 200, ""); !strings.Contains(string(got.Body), "stale-auth") {
		t.Fatalf("GET /session: %s", got.Body)
	}
	s.call("PUT", "/session?platform=x", s.IngestKey, `[{"domain":".x.com","name":"ct0","value":"v"}]`).want(t, 400, "invalid_parameter")
}

// `earshot helper --challenge x`: a browser opens the site with the
// owner's stale session through the operator's proxy; the fake x sends
// the stale session to a challenge that, once passed, sets a fresh
// auth_token and ct0 (as x does on /account/access, whose Set-Cookie
// names these two cookies) and lands on /home; the owner presses Enter
// and the helper saves the fresh session, which GET /session then hands
// back. The browser runs headless here.
func TestHelperChallengeSavesSession(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if browserRequired() {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", chromiumPath)
		}
		t.Skipf("no Chromium at %s: browser test skipped", chromiumPath)
	}
	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	s := start(t, "EARSHOT_PROXY_URL="+pu.String())
	s.call("PUT", "/session?platform=x", s.IngestKey, staleXJar).want(t, 200, "")

	home := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(helperVia) == "" {
			http.Error(w, "not through the proxy", http.StatusForbidden)
			return
		}
		c, _ := r.Cookie("auth_token")
		switch {
		case r.URL.Path == "/" && c != nil && c.Value == "stale-auth":
			http.Redirect(w, r, "/account/access", http.StatusFound)
		case r.URL.Path == "/account/access":
			http.SetCookie(w, &http.Cookie{Name: "auth_token", Value: "fresh-auth", Path: "/", HttpOnly: true})
			http.SetCookie(w, &http.Cookie{Name: "ct0", Value: "fresh-ct0", Path: "/"})
			http.Redirect(w, r, "/home", http.StatusFound)
		case r.URL.Path == "/home" && c != nil && c.Value == "fresh-auth":
			io.WriteString(w, "<html><body>home</body></html>")
			select {
			case home <- struct{}{}:
			default:
			}
		default:
			http.Error(w, "unexpected", http.StatusNotFound)
		}
	}))
	t.Cleanup(site.Close)

	logs, err := challengeX(t, s, site.URL, home, "the site's home")
	if err != nil {
		t.Fatalf("earshot helper --challenge x: %v\n%s", err, logs)
	}
	if forwarded.Load() == 0 {
		t.Error("the browser did not go through the proxy")
	}
	got := s.call("GET", "/session?platform=x", s.IngestKey, nil).want(t, 200, "")
	if !strings.Contains(string(got.Body), "fresh-auth") || !strings.Contains(string(got.Body), "fresh-ct0") || strings.Contains(string(got.Body), "stale-") {
		t.Fatalf("the stored session is not the fresh one: %s", got.Body)
	}
	if strings.Contains(logs, "fresh-auth") || strings.Contains(logs, s.IngestKey) {
		t.Fatalf("the helper wrote a secret:\n%s", logs)
	}
}

// challengeX runs `earshot helper --challenge x` for s, x at xURL, in a
// headless browser, and presses Enter once shown tells that the page
// the owner acts on (named page) is open; the helper's log and what
// it returned. Not for a parallel test: it sets the package's stdin and
// headless switch.
func challengeX(t *testing.T, s *instance, xURL string, shown <-chan struct{}, page string) (string, error) {
	t.Helper()
	enter, pressEnter := io.Pipe()
	helperStdin, challengeHeadless = enter, true
	t.Cleanup(func() { helperStdin, challengeHeadless = os.Stdin, false })
	env := map[string]string{
		"EARSHOT_HELPER_SERVER": s.URL, "EARSHOT_HELPER_KEY": s.IngestKey, "EARSHOT_HELPER_X_URL": xURL,
		"EARSHOT_HELPER_STATE": t.TempDir() + "/state.json", "EARSHOT_HELPER_BROWSER": chromiumPath,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := &syncWriter{w: &strings.Builder{}}
	done := make(chan error, 1)
	go func() {
		done <- helperCmd(ctx, []string{"--challenge", "x"}, func(k string) string { return env[k] }, logs)
	}()
	select {
	case <-shown:
	case err := <-done:
		t.Fatalf("the helper ended before %s was reached: %v\n%s", page, err, logs.String())
	case <-ctx.Done():
		t.Fatalf("%s was never reached", page)
	}
	pressEnter.Write([]byte("\n"))
	err := <-done
	return logs.String(), err
}

// syncWriter lets the helper's goroutine write while the test reads.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
