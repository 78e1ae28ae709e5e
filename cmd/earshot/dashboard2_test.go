package main

// The dashboard's second part in a real browser against the real binary:
// keys shown once and revoked, and the challenge flow of an account.

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/webhooktest"
)

func TestDashboardKeys(t *testing.T) {
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	b.open(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/keys")
	b.do(sendKeys("#k-name", "ci"))
	b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
	secret := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(secret, "svc_api_") {
		t.Fatalf("new key shown as %q\n%s", secret, b.text("main"))
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 200, "")
	b.open(s.URL + "/app/keys")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) {
		t.Fatal("the key is shown again")
	}
	b.submitAndWait(`#api-keys tbody tr:last-child form button`)
	if got := b.text(".notice"); !strings.Contains(got, "Key revoked") {
		t.Fatalf("after revoking: %q", got)
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 401, "unauthorized")
}

func TestDashboardChallengeFlow(t *testing.T) {
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<script>window.opener.postMessage({type:"svc:challenge-solved",platform:"facebook"},"*");window.close()</script>`))
	}))
	defer foreign.Close()
	b.open(s.loginLink(s.OwnerID))
	if !strings.Contains(b.text("#nav-notifications"), "1") {
		t.Fatalf("no unread count: %q", b.text("header"))
	}
	b.open(s.URL + "/app/accounts")
	fb := `#acct-facebook`
	if got := b.text(fb); !strings.Contains(got, "action_required") || !strings.Contains(got, "checkpointed") || !strings.Contains(got, "open_challenge") {
		t.Fatalf("facebook account: %q", got)
	}
	if got := b.text(`#acct-reddit`); !strings.Contains(got, "not_connected") || !strings.Contains(got, "connect") {
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

// Free plan: the webhooks page says what Pro would allow, and writes
// are refused.
func TestDashboardWebhooksGated(t *testing.T) {
	s := start(t)
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	_, _, body := c.get("/app/webhooks")
	if !strings.Contains(body, "Webhooks are a Pro feature") || strings.Contains(body, `id="w-url"`) {
		t.Fatalf("gated page:\n%s", body)
	}
	if code, _, _ := c.post("/app/webhooks", url.Values{"url": {"https://hooks.example.com/x"}, "platform": {"x"}}); code != 403 {
		t.Fatalf("creating on Free: %d", code)
	}
}

// One owner's session never reads or changes another's keys, webhooks,
// accounts or notifications.
func TestDashboardPart2TwoOwners(t *testing.T) {
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	a, bo := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	h, _ := hook(t, s, a.full, map[string]any{"min_score": 0})
	hid := h["id"].(string)
	acct := s.call("POST", "/account-status", a.ingest, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "").JSON(t)["accountId"].(string)
	ca := newBrowserless(t, s)
	ca.signIn(s.loginLink(a.id))
	_, _, keys := ca.get("/app/keys")
	kid := regexp.MustCompile(`data-key="([^"]+)"`).FindStringSubmatch(keys)[1]
	_, _, notes := ca.get("/app/notifications")
	nid := regexp.MustCompile(`id="n-([^"]+)"`).FindStringSubmatch(notes)[1]

	cb := newBrowserless(t, s)
	cb.signIn(s.loginLink(bo.id))
	for _, p := range []string{"/app/keys", "/app/webhooks", "/app/accounts", "/app/notifications"} {
		if _, _, body := cb.get(p); strings.Contains(body, kid) || strings.Contains(body, hid) || strings.Contains(body, acct) || strings.Contains(body, nid) {
			t.Fatalf("B sees A's data on %s", p)
		}
	}
	for _, p := range []string{"/app/webhooks/" + hid, "/app/accounts/" + acct + "/challenge"} {
		if code, _, _ := cb.get(p); code != 404 {
			t.Fatalf("B GET %s: %d", p, code)
		}
	}
	for p, f := range map[string]url.Values{
		"/app/keys/" + kid + "/revoke": {}, "/app/ingest-keys/" + kid + "/revoke": {},
		"/app/webhooks/" + hid: {"min_score": {"5"}, "platform": {"x"}}, "/app/webhooks/" + hid + "/active": {"active": {"false"}},
		"/app/webhooks/" + hid + "/test": {}, "/app/webhooks/" + hid + "/deliveries/d1/redeliver": {},
		"/app/accounts/" + acct + "/resolve": {}, "/app/notifications/" + nid + "/read": {},
	} {
		if code, _, _ := cb.post(p, f); code != 404 {
			t.Fatalf("B POST %s: %d, want 404", p, code)
		}
	}
	cb.post("/app/notifications/read-all", url.Values{})
	// A's things are as they were.
	s.call("GET", "/api/v1/me", a.full, nil).want(t, 200, "")
	if w := listOf(t, s.call("GET", "/api/v1/webhooks", a.full, nil).want(t, 200, ""))[0].(map[string]any); w["active"] != true || w["min_score"] != 0.0 {
		t.Fatalf("A's webhook: %v", w)
	}
	if _, _, body := ca.get("/app/accounts"); !strings.Contains(body, "checkpointed") {
		t.Fatal("A's challenge was cleared")
	}
	if _, _, body := ca.get("/app/notifications"); !strings.Contains(body, `id="unread-count"`) {
		t.Fatal("A's notification was marked read")
	}
}

// Pro: add a webhook in the browser (the address rule's message beside
// the field, the secret once), test ping, the delivery log, redeliver,
// switch off and on.
func TestDashboardWebhooks(t *testing.T) {
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	b.open(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/webhooks")
	b.do(sendKeys("#w-url", "ftp://hooks.example.com/in"), setValue("#w-min", "0"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if e := b.text("#e-url"); e == "" {
		t.Fatalf("no address error beside the field:\n%s", b.text("main"))
	}
	r := webhooktest.NewRelay(t)
	b.do(setValue("#w-url", r.URL()+"/hooks/earshot"), setValue("#w-min", "0"))
	b.submitAndWait(`form.add button[type="submit"]`)
	secret := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q\n%s", secret, b.text("main"))
	}
	rcv := webhooktest.NewReceiver(t, secret)
	r.Connect(rcv)
	b.submitAndWait(`table.hooks a`)
	b.submitAndWait(`#test`)
	if got := b.text("#test-result"); !strings.Contains(got, "answered 200") {
		t.Fatalf("test ping: %q", got)
	}
	s.ingest(s.IngestKey, "x", xPost("w1", "ada", "acme for sale?"))
	rcv.WaitFor(2, 10*time.Second)
	b.open(strings.TrimSuffix(b.location(), "/test"))
	b.waitFor(`document.querySelectorAll("table.deliveries tbody tr").length === 2`, "two deliveries in the log")
	if got := b.text("table.deliveries tbody"); !strings.Contains(got, "match.created") || !strings.Contains(got, "delivered") || !strings.Contains(got, "200") {
		t.Fatalf("log: %q", got)
	}
	b.submitAndWait(`table.deliveries button`)
	if got := b.text(".notice"); got != "Queued to be sent again." {
		t.Fatalf("redeliver: %q", got)
	}
	rcv.WaitFor(3, 10*time.Second)
	b.submitAndWait(`#switch`)
	if got := b.text("main"); !strings.Contains(got, "Switch on") {
		t.Fatalf("after switching off: %q", got)
	}
	b.submitAndWait(`#switch`)
	if got := b.text(".notice"); !strings.Contains(got, "switched on") {
		t.Fatalf("after switching on: %q", got)
	}
}
