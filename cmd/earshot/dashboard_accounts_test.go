package main

// The dashboard's accounts in a real browser against the real binary:
// the challenge flow of an account.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDashboardChallengeFlow(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<script>window.opener.postMessage({type:"svc:challenge-solved",platform:"facebook"},"*");window.close()</script>`))
	}))
	defer foreign.Close()
	b.signIn(s.loginLink(s.OwnerID))
	if !strings.Contains(b.text("#nav-notifications"), "1") {
		t.Fatalf("no unread count: %q", b.text("header"))
	}
	b.open(s.URL + "/app/accounts")
	fb := `#acct-facebook`
	if got := b.text(fb); !strings.Contains(got, "action required") || !strings.Contains(got, "checkpointed") || !strings.Contains(got, "Open the challenge") {
		t.Fatalf("facebook account: %q", got)
	}
	if got := b.text(`#acct-reddit`); !strings.Contains(got, "read by the server") || !strings.Contains(got, "Connect") {
		t.Fatalf("reddit account: %q", got)
	}
	btn := `document.querySelector('form[data-resolve="facebook"] button')`
	if !eval[bool](b, btn+`.disabled`) {
		t.Fatal("Mark resolved is not locked")
	}
	// Another origin, a synthetic event, another platform: all ignored.
	b.do(js(`window.__f = window.open(` + jsString(foreign.URL) + `); 0`))
	b.waitFor(`window.__f.closed`, "the foreign page to post and close")
	b.do(js(`window.dispatchEvent(new MessageEvent("message", {origin: "https://evil.example", data: {type: "svc:challenge-solved", platform: "facebook"}}))`))
	b.do(js(`window.postMessage({type: "svc:challenge-solved", platform: "x"}, location.origin)`))
	b.do(js(`window.__tick = false; setTimeout(function(){ window.__tick = true }, 300)`))
	b.waitFor(`window.__tick`, "messages handled")
	if !eval[bool](b, btn+`.disabled`) {
		t.Fatal("a foreign or wrong-platform message unlocked Mark resolved")
	}
	// The challenge page, opened by its link, unlocks it.
	b.do(clickOn(`a[data-challenge="facebook"]`))
	b.waitFor(`(function(){var w=window.open("", "earshot-challenge");return w && w.document.readyState==="complete" && w.document.getElementById("challenge-done")})()`, "the challenge page")
	b.do(js(`window.open("", "earshot-challenge").document.getElementById("challenge-done").click()`))
	b.waitFor(`!`+btn+`.disabled`, "Mark resolved unlocked")
	b.submitAndWait(`form[data-resolve="facebook"] button`)
	if got := b.text(fb); !strings.Contains(got, "healthy") {
		t.Fatalf("after resolving: %q", got)
	}
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	id := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 200}).want(t, 200, "").JSON(t)["accountId"].(string)
	if code, _, body := c.post("/app/accounts/"+id+"/resolve", nil); code != 409 || !strings.Contains(body, "problem") {
		t.Fatalf("resolving nothing: %d", code)
	}
}
