package main

// The dashboard's second part in a real browser against the real binary:
// keys shown once and revoked, and the challenge flow of an account.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// API keys: made with a name and scopes, shown once with a copy button,
// listed by fingerprint and last use, revoked to 401 from the next
// request; the sixth live key refused beside the name with the service's
// message. Ingest keys: made, shown once, listed, revoked.
func TestDashboardKeys(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/keys")
	b.do(sendKeys("#k-name", "ci"), clickOn(`input[name="scope"][value="webhooks"]`))
	b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
	secret := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(secret, "svc_api_") || b.text("#new-h") != "Your new API key “ci”" {
		t.Fatalf("new key shown as %q under %q\n%s", secret, b.text("#new-h"), b.text("main"))
	}
	// The copy button puts the key on the clipboard.
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: s.URL}); err != nil {
				return err
			}
		}
		return nil
	}))
	b.click(`button.copy`, `document.querySelector(".copy-status").textContent === "Copied."`)
	if got := eval[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise); got != secret {
		t.Fatalf("the clipboard holds %q", got)
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 200, "")
	b.open(s.URL + "/app/keys")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) || b.text("#new-secret") != "" {
		t.Fatal("the key is shown again")
	}
	ci := b.rowOf("#api-keys", "ci")
	row := b.text(`tr[data-key="` + ci + `"]`)
	if !strings.Contains(row, "read, webhooks") || !strings.Contains(row, "just now") || strings.Contains(row, "never") ||
		!regexp.MustCompile(`[0-9a-f]{4}…[0-9a-f]{4}`).MatchString(row) {
		t.Fatalf("the key's row (scopes, fingerprint, created, last used): %q", row)
	}
	b.submitAndWait(`tr[data-key="` + ci + `"] form button`)
	if got := b.text(".notice"); !strings.Contains(got, "Key revoked") {
		t.Fatalf("after revoking: %q", got)
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 401, "unauthorized")
	if got := b.text(`tr[data-key="` + ci + `"]`); !strings.Contains(got, "revoked") || strings.Contains(got, "Revoke") {
		t.Fatalf("the revoked key's row: %q", got)
	}

	// Five live keys: the bootstrap key and four more; the sixth is
	// refused beside the name, in the words the admin console gives.
	for i := 2; i <= 5; i++ {
		b.do(setValue("#k-name", fmt.Sprint("key ", i)))
		b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
		if !strings.HasPrefix(eval[string](b, `document.querySelector("#new-secret").value`), "svc_api_") {
			t.Fatalf("key %d not made:\n%s", i, b.text("main"))
		}
	}
	if got := b.text("#api-h + .hint"); !strings.Contains(got, "5 of 5 live keys") {
		t.Fatalf("the count says %q", got)
	}
	b.do(setValue("#k-name", "sixth"))
	b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
	const limit = "an owner may hold at most 5 API keys: revoke one first"
	if got := b.text("#e-name"); got != limit {
		t.Fatalf("beside the name: %q\n%s", got, b.text("main"))
	}
	if b.text("#new-secret") != "" || eval[string](b, `document.querySelector("#k-name").value`) != "sixth" ||
		eval[string](b, `document.querySelector("#k-name").getAttribute("aria-describedby")`) != "e-name" {
		t.Fatal("a refused key shows a secret, loses the name typed, or its error is not tied to the field")
	}
	if _, err := s.admin("key", "create", "--owner", s.OwnerID, "--name", "cli"); err == nil || !strings.Contains(err.Error(), limit) {
		t.Fatalf("the admin console says: %v", err)
	}

	// Ingest keys: made with a name, shown once, used by a helper,
	// revoked to 401.
	b.open(s.URL + "/app/keys")
	b.do(sendKeys("#i-name", "laptop helper"))
	b.submitAndWait(`form[action="/app/ingest-keys"] button[type="submit"]`)
	ingest := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(ingest, "svc_ingest_") || b.text("#new-h") != "Your new ingest key “laptop helper”" {
		t.Fatalf("new ingest key shown as %q under %q", ingest, b.text("#new-h"))
	}
	s.ingest(ingest, "x", xPost("k1", "ada", "hello"))
	b.open(s.URL + "/app/keys")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(ingest)+`)`) {
		t.Fatal("the ingest key is shown again")
	}
	helper := b.rowOf("#ingest-keys", "laptop helper")
	if row := b.text(`tr[data-key="` + helper + `"]`); helper == "" || !strings.Contains(row, "ingest, account status") || !strings.Contains(row, "just now") {
		t.Fatalf("the ingest key's row: %q\n%s", row, b.text("#ingest-keys"))
	}
	if n := eval[int](b, `document.querySelectorAll("#ingest-keys tbody tr").length`); n != 2 {
		t.Fatalf("%d ingest keys listed, want the bootstrap one and the new one", n)
	}
	b.submitAndWait(`tr[data-key="` + helper + `"] form button`)
	if got := b.text(`tr[data-key="` + helper + `"]`); !strings.Contains(got, "revoked") {
		t.Fatalf("the revoked ingest key's row: %q", got)
	}
	s.call("POST", "/ingest", ingest, map[string]any{"platform": "x", "posts": []any{xPost("k2", "ada", "hello")}}).want(t, 401, "unauthorized")
	s.ingest(s.IngestKey, "x", xPost("k3", "ada", "the other key still works"))
}

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

// Free plan: the webhooks page says what Pro would allow and offers no
// form, and writes are refused.
func TestDashboardWebhooksGated(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t)
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/webhooks")
	if got := b.text(".gate"); !strings.Contains(got, "Webhooks are a Pro feature") || !strings.Contains(got, "Pro would allow webhooks") ||
		!strings.Contains(got, "the plan allows no webhooks") {
		t.Fatalf("gated page:\n%s", b.text("main"))
	}
	if eval[int](b, `document.querySelectorAll("main form, #w-url").length`) != 0 {
		t.Fatal("a Free plan is offered the webhook form")
	}
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	for p, f := range map[string]url.Values{
		"/app/webhooks": {"url": {"https://hooks.example.com/x"}, "platform": {"x"}},
	} {
		if code, _, body := c.post(p, f); code != 403 || !strings.Contains(body, "Webhooks are a Pro feature") {
			t.Fatalf("POST %s on Free: %d", p, code)
		}
	}
}

// One owner's session never reads or changes another's keys, webhooks,
// deliveries, accounts or notifications, by an id of the other's in the
// address, on any route of the dashboard's second part.
func TestDashboardPart2TwoOwners(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	a, bo := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	h, rcv := hook(t, s, a.full, map[string]any{"min_score": 0})
	hid, hurl := h["id"].(string), h["url"].(string)
	s.ingest(a.ingest, "x", xPost("a1", "ada", "acme question of A"))
	ds := waitDeliveries(t, s, a.full, hid, func(l []any) bool { return len(l) == 1 && l[0].(map[string]any)["status"] == "delivered" })
	did := ds[0].(map[string]any)["id"].(string)
	sent := len(rcv.WaitFor(1, 10*time.Second))
	acct := s.call("POST", "/account-status", a.ingest, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "").JSON(t)["accountId"].(string)
	hb := hookAt(t, s, bo.full, "https://hooks.example.com/b")

	ca := newBrowserless(t, s)
	ca.signIn(s.loginLink(a.id))
	_, _, keys := ca.get("/app/keys")
	kid := regexp.MustCompile(`<tbody>\s*<tr class="" data-key="([^"]+)"`).FindStringSubmatch(keys)[1]
	ikid := regexp.MustCompile(`(?s)id="ingest-keys".*?data-key="([^"]+)"`).FindStringSubmatch(keys)[1]
	_, _, notes := ca.get("/app/notifications")
	nid := regexp.MustCompile(`id="n-([^"]+)"`).FindStringSubmatch(notes)[1]

	cb := newBrowserless(t, s)
	cb.signIn(s.loginLink(bo.id))
	for _, p := range []string{"/app/keys", "/app/webhooks", "/app/accounts", "/app/notifications", "/app/webhooks/" + hb} {
		code, _, body := cb.get(p)
		if code != 200 {
			t.Fatalf("B GET %s: %d", p, code)
		}
		for _, a := range []string{kid, ikid, hid, hurl, did, acct, nid} {
			if strings.Contains(body, a) {
				t.Fatalf("B sees A's %s on %s", a, p)
			}
		}
	}
	for _, c := range []struct {
		name, method, path string
		form               url.Values
	}{
		{"A's webhook page", "GET", "/app/webhooks/" + hid, nil},
		{"A's challenge page", "GET", "/app/accounts/" + acct + "/challenge", nil},
		{"revoke A's API key", "POST", "/app/keys/" + kid + "/revoke", url.Values{}},
		{"revoke A's ingest key", "POST", "/app/ingest-keys/" + ikid + "/revoke", url.Values{}},
		{"revoke A's ingest key as an API key", "POST", "/app/keys/" + ikid + "/revoke", url.Values{}},
		{"edit A's webhook", "POST", "/app/webhooks/" + hid, url.Values{"min_score": {"5"}, "platform": {"x"}}},
		{"switch A's webhook off", "POST", "/app/webhooks/" + hid + "/active", url.Values{"active": {"false"}}},
		{"ping A's webhook", "POST", "/app/webhooks/" + hid + "/test", url.Values{}},
		{"redeliver A's delivery", "POST", "/app/webhooks/" + hid + "/deliveries/" + did + "/redeliver", url.Values{}},
		{"redeliver A's delivery through B's webhook", "POST", "/app/webhooks/" + hb + "/deliveries/" + did + "/redeliver", url.Values{}},
		{"resolve A's account", "POST", "/app/accounts/" + acct + "/resolve", url.Values{}},
		{"mark A's notification read", "POST", "/app/notifications/" + nid + "/read", url.Values{}},
	} {
		var code int
		if c.method == "GET" {
			code, _, _ = cb.get(c.path)
		} else {
			code, _, _ = cb.post(c.path, c.form)
		}
		if code != 404 {
			t.Errorf("B: %s (%s %s): %d, want 404", c.name, c.method, c.path, code)
		}
	}
	if code, _, _ := cb.post("/app/notifications/read-all", url.Values{}); code != 303 {
		t.Fatalf("B marks all read: %d", code)
	}

	// A's things are as they were.
	s.call("GET", "/api/v1/me", a.full, nil).want(t, 200, "")
	s.ingest(a.ingest, "x", xPost("a2", "ada", "A's ingest key still works"))
	if w := webhookOf(t, s, a.full, hid); w["active"] != true || w["min_score"] != 0.0 || fmt.Sprint(w["platforms"]) != "[reddit x facebook]" {
		t.Fatalf("A's webhook: %v", w)
	}
	for _, d := range listOf(t, s.call("GET", "/api/v1/webhooks/"+hid+"/deliveries", a.full, nil).want(t, 200, "")) {
		if d := d.(map[string]any); d["id"] == did && (d["trigger"] != "scheduled" || d["status"] != "delivered") {
			t.Fatalf("A's delivery was sent again: %v", d)
		}
	}
	if n := len(rcv.Messages()); n > sent+1 { // the match of a2 may be one more
		t.Fatalf("A's receiver got %d messages, B's tries among them", n)
	}
	for _, m := range rcv.Messages() {
		if strings.Contains(string(m.Body), `"ping"`) {
			t.Fatal("B sent A's webhook a test ping")
		}
	}
	if _, _, body := ca.get("/app/accounts"); !strings.Contains(body, "checkpointed") {
		t.Fatal("A's challenge was cleared")
	}
	if _, _, body := ca.get("/app/notifications"); !strings.Contains(body, `id="unread-count"`) || !strings.Contains(body, ` unread" id="n-`+nid+`"`) {
		t.Fatal("A's notification was marked read")
	}
}

// hookAt creates a webhook of the key's owner at u, which receives
// nothing, and returns its id.
func hookAt(t *testing.T, s *instance, key, u string) string {
	t.Helper()
	return dataOf(t, s.call("POST", "/api/v1/webhooks", key, map[string]any{"url": u, "platforms": []string{"reddit"}}).want(t, 201, ""))["id"].(string)
}

// Pro: add a webhook in the browser (the address rule's message beside
// the field, the secret once), test ping, the delivery log, redeliver,
// switch off and on.
func TestDashboardWebhooks(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/webhooks")
	b.do(sendKeys("#w-url", "ftp://hooks.example.com/in"), setValue("#w-min", "0"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if e := b.text("#e-url"); e != "url must use http or https" {
		t.Fatalf("beside the address: %q\n%s", e, b.text("main"))
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
	b.open(s.URL + "/app/webhooks")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) {
		t.Fatal("the signing secret is shown again")
	}
	b.submitAndWait(`table.hooks a`)
	b.submitAndWait(`#test`)
	if got := b.text("#test-result"); !strings.Contains(got, "answered 200") {
		t.Fatalf("test ping: %q", got)
	}
	page := strings.TrimSuffix(b.location(), "/test")
	hid := page[strings.LastIndex(page, "/")+1:]

	// The delivery log: the ping and a match, each with its trigger,
	// status, tries and the receiver's answer; once the match's delivery
	// is final it can be sent again.
	s.ingest(s.IngestKey, "x", xPost("w1", "ada", "acme for sale?"))
	rcv.WaitFor(2, 10*time.Second)
	b.openUntil(page, `document.querySelector("table.deliveries button")`, "the match's delivery, delivered")
	rows := eval[[]string](b, `Array.from(document.querySelectorAll("table.deliveries tbody tr")).map(function(tr){return Array.from(tr.cells).slice(0,5).map(function(c){return c.innerText.trim()}).join("|")})`)
	if len(rows) != 2 || rows[0] != "match.created|scheduled|delivered|1|200" || rows[1] != "ping|ping|delivered|1|200" {
		t.Fatalf("log rows: %q", rows)
	}
	b.submitAndWait(`table.deliveries button`)
	if got := b.text(".notice"); got != "Queued to be sent again." {
		t.Fatalf("redeliver: %q", got)
	}
	rcv.WaitFor(3, 10*time.Second)
	b.openUntil(page, `document.querySelector("table.deliveries tbody tr td").innerText === "manual"`, "the redelivery in the log")
	b.submitAndWait(`#switch`)
	if got := b.text("main"); !strings.Contains(got, "Switch on") {
		t.Fatalf("after switching off: %q", got)
	}
	b.submitAndWait(`#switch`)
	if got := b.text(".notice"); !strings.Contains(got, "switched on") {
		t.Fatalf("after switching on: %q", got)
	}

	// Edit: a refusal beside its field, then the minimum score and the
	// platforms saved.
	b.open(page)
	b.do(setValue("#w-min", "101"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if got := b.text("#e-min"); got != "min_score must be 0 to 100" {
		t.Fatalf("beside the minimum score: %q\n%s", got, b.text("main"))
	}
	b.do(setValue("#w-min", "5"), clickOn(`input[name="platform"][value="facebook"]`))
	b.submitAndWait(`form.add button[type="submit"]`)
	if got := b.text(".notice"); got != "Settings saved." {
		t.Fatalf("after saving: %q\n%s", got, b.text("main"))
	}
	if v := eval[string](b, `document.querySelector("#w-min").value`); v != "5" ||
		eval[bool](b, `document.querySelector('input[name="platform"][value="facebook"]').checked`) ||
		!eval[bool](b, `document.querySelector('input[name="platform"][value="x"]').checked`) {
		t.Fatalf("the form after saving: min %q\n%s", v, b.text("main"))
	}
	if w := listOf(t, s.call("GET", "/api/v1/webhooks", s.APIKey, nil).want(t, 200, ""))[0].(map[string]any); w["id"] != hid || w["min_score"] != 5.0 ||
		fmt.Sprint(w["platforms"]) != "[reddit x]" || w["active"] != true {
		t.Fatalf("the API after saving: %v", w)
	}
}

// A webhook whose receiver keeps failing switches itself off: the list
// and its page show the recorded reason, the owner gets a notification
// and one email naming it and the reason, and switching it on again in
// the dashboard clears the reason.
func TestDashboardWebhookSwitchedItselfOff(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2",
		"EARSHOT_WEBHOOK_RETRY_SCHEDULE=10ms", "EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com")
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "receiver down", http.StatusInternalServerError)
	}))
	defer broken.Close()
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	h := dataOf(t, s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": broken.URL + "/in", "min_score": 0}).want(t, 201, ""))
	hid, hurl := h["id"].(string), h["url"].(string)
	for i := range core.MaxConsecutiveFailures {
		s.ingest(s.IngestKey, "x", xPost(fmt.Sprint("off", i), "ada", fmt.Sprint("acme question number ", i)))
	}
	var reason string
	for deadline := time.Now().Add(20 * time.Second); reason == ""; {
		w := webhookOf(t, s, s.APIKey, hid)
		if w["active"] == false {
			reason, _ = w["disabledReason"].(string)
			if reason == "" {
				t.Fatalf("switched off without a reason: %v", w)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook is still on: %v", w)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(reason, "5 failed deliveries in a row") || !strings.Contains(reason, "http 500") {
		t.Fatalf("reason %q", reason)
	}

	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/webhooks")
	row := `table.hooks tbody tr`
	if got := b.text(row); !strings.Contains(got, hurl) || !strings.Contains(got, "off") || !strings.Contains(got, reason) {
		t.Fatalf("the list's row: %q", got)
	}
	b.submitAndWait(row + ` a`)
	if got := b.text(".status.off"); got != "off" || b.text(".reason-off") != reason || b.text("#switch") != "Switch on" {
		t.Fatalf("the webhook's page: %q\n%s", got, b.text("main"))
	}
	if got := b.text("table.deliveries tbody tr"); !strings.Contains(got, "failed") || !strings.Contains(got, "500") || !strings.Contains(got, "http 500") {
		t.Fatalf("the newest delivery: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll("table.deliveries button").length`); n != 0 {
		t.Fatalf("%d redeliver buttons on a switched-off webhook", n)
	}
	// A test ping shows what the broken receiver answered.
	b.submitAndWait(`#test`)
	if got := b.text("#test-result"); !strings.Contains(got, "Your receiver answered 500") {
		t.Fatalf("test ping: %q", got)
	}

	// The notification, in the list with a link to the webhook.
	if got := b.text("#unread-count"); !strings.HasPrefix(got, "1") {
		t.Fatalf("unread count %q", got)
	}
	b.open(s.URL + "/app/notifications")
	note := `li.note.unread`
	if got := b.text(note); !strings.Contains(got, "Your webhook "+hurl+" was switched off") || !strings.Contains(got, reason) ||
		eval[string](b, `document.querySelector("li.note.unread a").getAttribute("href")`) != "/app/webhooks/"+hid {
		t.Fatalf("the notification: %q", got)
	}
	// One email, naming the webhook and the reason.
	var mails []mailtest.Message
	for _, m := range smtp.WaitFor(1, 10*time.Second) {
		if strings.Contains(m.Subject, "was switched off") {
			mails = append(mails, m)
		}
	}
	if len(mails) != 1 || mails[0].To[0] != "owner@localhost" || !strings.Contains(mails[0].Subject, hurl) || !strings.Contains(mails[0].Body, reason) {
		t.Fatalf("emails: %+v", mails)
	}

	// Switched on again, the reason is gone.
	b.do(clickOn(`li.note.unread a`))
	b.waitFor(`location.pathname === "/app/webhooks/`+hid+`" && !!document.querySelector("#switch")`, "the webhook's page from the notification")
	b.submitAndWait(`#switch`)
	if got := b.text(".status.on"); got != "on" || b.text(".reason-off") != "" {
		t.Fatalf("after switching on:\n%s", b.text("main"))
	}
	if w := webhookOf(t, s, s.APIKey, hid); w["active"] != true || w["disabledReason"] != nil {
		t.Fatalf("the API after switching on: %v", w)
	}
}

// Notifications: listed newest first with an unread count in the
// navigation on every page; a repeated identical report adds none;
// marking one read, then all, lowers the count to nothing.
func TestDashboardNotifications(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	fb := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "").JSON(t)
	x := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 401}).want(t, 200, "").JSON(t)
	count := func() string {
		t.Helper()
		return strings.TrimSuffix(eval[string](b, `(function(){var c=document.getElementById("unread-count");return c?c.textContent:""})()`), " unread")
	}
	b.signIn(s.loginLink(s.OwnerID))
	if got := count(); got != "2" {
		t.Fatalf("unread count on the inbox %q", got)
	}
	// The accounts page shows each view exactly as /account-status
	// answered it.
	b.open(s.URL + "/app/accounts")
	for _, v := range []map[string]any{fb, x} {
		sec := "#acct-" + v["platform"].(string)
		if got := b.text(sec + " .state"); got != v["state"] {
			t.Fatalf("%s state %q, the API says %v", sec, got, v["state"])
		}
		if got := b.text(sec + " .issue"); !strings.HasPrefix(got, v["issue"].(string)) {
			t.Fatalf("%s issue %q, the API says %v", sec, got, v["issue"])
		}
		if got := eval[string](b, `document.querySelector("`+sec+` .action").dataset.action`); got != v["action"] {
			t.Fatalf("%s action %q, the API says %v", sec, got, v["action"])
		}
	}
	// The same reports again: no new notification.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 401}).want(t, 200, "")
	b.open(s.URL + "/app/notifications")
	if got := count(); got != "2" {
		t.Fatalf("unread count %q after repeated reports", got)
	}
	titles := eval[[]string](b, `Array.from(document.querySelectorAll("li.note h2")).map(function(h){return h.innerText})`)
	if len(titles) != 2 || !strings.HasPrefix(titles[0], "Your x account needs you") || !strings.HasPrefix(titles[1], "Your facebook account needs you") {
		t.Fatalf("notifications %q", titles)
	}
	if n := eval[int](b, `document.querySelectorAll("li.note.unread").length`); n != 2 {
		t.Fatalf("%d unread", n)
	}
	b.submitAndWait(`li.note:last-of-type form button`)
	if got := b.text(".notice"); got != "Marked read." || count() != "1" {
		t.Fatalf("after marking one read: %q, count %q", got, count())
	}
	if eval[bool](b, `document.querySelector("li.note:last-of-type").classList.contains("unread")`) ||
		!eval[bool](b, `document.querySelector("li.note:first-of-type").classList.contains("unread")`) {
		t.Fatal("the wrong notification was marked read")
	}
	// A recovery makes one too.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 200}).want(t, 200, "")
	b.open(s.URL + "/app/notifications")
	if got := count(); got != "2" || !strings.HasPrefix(b.text("li.note h2"), "Your x account is healthy again") {
		t.Fatalf("after the recovery: count %q, newest %q", got, b.text("li.note h2"))
	}
	b.submitAndWait(`#read-all`)
	if got := b.text(".notice"); got != "2 marked read." || count() != "" || b.text("#read-all") != "" {
		t.Fatalf("after marking all read: %q, count %q", got, count())
	}
	if n := eval[int](b, `document.querySelectorAll("li.note").length`); n != 3 {
		t.Fatalf("%d notifications listed, want 3", n)
	}
	b.open(s.URL + "/app/plan")
	if got := count(); got != "" {
		t.Fatalf("unread count %q on another page", got)
	}
}

// webhookOf returns the webhook id from the API's list of the key's owner.
func webhookOf(t *testing.T, s *instance, key, id string) map[string]any {
	t.Helper()
	for _, w := range listOf(t, s.call("GET", "/api/v1/webhooks", key, nil).want(t, 200, "")) {
		if w.(map[string]any)["id"] == id {
			return w.(map[string]any)
		}
	}
	t.Fatalf("no webhook %s", id)
	return nil
}
