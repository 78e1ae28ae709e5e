package main

// The dashboard's webhooks in a real browser against the real binary:
// the plan gate, adding and testing one, and a webhook switching itself
// off.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

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
	var (
		reason string
		w      map[string]any
	)
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool {
		if w = webhookOf(t, s, s.APIKey, hid); w["active"] == false {
			if reason, _ = w["disabledReason"].(string); reason == "" {
				t.Fatalf("switched off without a reason: %v", w)
			}
		}
		return reason != ""
	}, func() string { return fmt.Sprintf("the webhook is still on: %v", w) })
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
