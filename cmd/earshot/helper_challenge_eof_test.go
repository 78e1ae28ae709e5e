package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// `earshot helper --challenge x` started without a terminal (its input
// at its end at once, as from a desktop launcher or </dev/null) waits for
// the owner as it does at a terminal: only Enter or the tab's close ends
// the visit. Ending it at the end of the input saved the stored stale
// session straight back, said "Saved", and the new jar cleared the
// account's state on the server with nothing solved.
func TestHelperChallengeWaitsWithoutATerminal(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if browserRequired() {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", chromiumPath)
		}
		t.Skipf("no Chromium at %s: browser test skipped", chromiumPath)
	}
	proxy, _ := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	s := start(t, "EARSHOT_PROXY_URL="+pu.String())
	s.call("PUT", "/session?platform=x", s.IngestKey, staleXJar).want(t, 200, "")

	// The challenge page waits for a person: nothing on it ends by itself.
	challenge := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			http.Redirect(w, r, "/account/access", http.StatusFound)
		case "/account/access":
			http.SetCookie(w, &http.Cookie{Name: "guest_id", Value: "set-on-the-challenge-page", Path: "/"})
			w.Write([]byte("<html><body>verify it is you</body></html>"))
			select {
			case challenge <- struct{}{}:
			default:
			}
		default:
			http.Error(w, "unexpected", http.StatusNotFound)
		}
	}))
	t.Cleanup(site.Close)

	helperStdin, challengeHeadless = strings.NewReader(""), true
	t.Cleanup(func() { helperStdin, challengeHeadless = os.Stdin, false })
	env := map[string]string{
		"EARSHOT_HELPER_SERVER": s.URL, "EARSHOT_HELPER_KEY": s.IngestKey, "EARSHOT_HELPER_X_URL": site.URL,
		"EARSHOT_HELPER_STATE": t.TempDir() + "/state.json", "EARSHOT_HELPER_BROWSER": chromiumPath,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop, stopped := context.WithCancel(ctx)
	defer stopped()
	logs := &syncWriter{w: &strings.Builder{}}
	done := make(chan error, 1)
	go func() {
		done <- helperCmd(stop, []string{"--challenge", "x"}, func(k string) string { return env[k] }, logs)
	}()
	select {
	case <-challenge:
	case err := <-done:
		t.Fatalf("the visit ended without the owner (input at its end): %v\n%s", err, logs.String())
	case <-ctx.Done():
		t.Fatal("the challenge page was never opened")
	}
	// The page is open and the input long at its end: the helper still
	// waits, until it is stopped.
	select {
	case err := <-done:
		t.Fatalf("the visit ended without the owner (input at its end): %v\n%s", err, logs.String())
	default:
	}
	stopped()
	if err := <-done; err != nil {
		t.Fatalf("stopped, the helper returned %v\n%s", err, logs.String())
	}
	if strings.Contains(logs.String(), "Saved your") {
		t.Fatalf("a session was saved with nothing solved:\n%s", logs.String())
	}
	if got := s.call("GET", "/session?platform=x", s.IngestKey, nil).want(t, 200, ""); strings.Contains(string(got.Body), "guest_id") {
		t.Fatalf("the stored session was replaced: %s", got.Body)
	}
}
