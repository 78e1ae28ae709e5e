package main

// Forms of the dashboard as an owner uses them in a browser: a channel
// added through its folded-away form, an account marked resolved without
// script (and with nothing left to clear), the address change by
// emailed link, and the Copy buttons of the helper's commands.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/mailtest"
)

func TestDashboardOwnerForms(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	console := watchWalk(t, b)
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=5",
		"EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com")
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(recv.Close)
	b.signIn(s.loginLink(s.OwnerID))

	// A channel: its form is folded away until its summary is pressed; a
	// refusal opens it again with the words beside the field.
	b.open(s.URL + "/app/webhooks")
	if eval[bool](b, `document.querySelector("#add-ntfy").open || document.querySelector("#ntfy-url").checkVisibility()`) {
		t.Fatal("the ntfy form is not folded away")
	}
	b.do(clickOn("#add-ntfy summary"))
	b.waitFor(`document.querySelector("#ntfy-url").checkVisibility()`, "the ntfy form unfolded")
	b.submitAndWait(`#add-ntfy button[type="submit"]`)
	if !eval[bool](b, `document.querySelector("#add-ntfy").open`) || b.text("#ntfy-e-url") == "" {
		t.Fatalf("an empty ntfy form refused: %q\n%s", b.text("#ntfy-e-url"), b.text("main"))
	}
	onlyStatus(t, console, "400", "/app/channels")
	b.do(setValue("#ntfy-url", recv.URL+"/topic"))
	b.submitAndWait(`#add-ntfy button[type="submit"]`)
	if got := b.text(".notice"); !strings.HasPrefix(got, "ntfy channel added: ") {
		t.Fatalf("after adding: %q\n%s", got, b.text("main"))
	}
	if got := b.text(`#destinations tr[data-kind="ntfy"]`); got == "" {
		t.Fatalf("no ntfy row:\n%s", b.text("#destinations"))
	}
	noConsole(t, console, "adding a channel")

	// The Copy buttons of the helper's commands copy them.
	b.open(s.URL + "/app/accounts")
	b.click(`#helper-command ~ button.copy`, `document.querySelector("#helper-command").parentNode.querySelector(".copy-status").textContent === "Copied."`)
	noConsole(t, console, "copying the helper's command")

	// Mark resolved without script: the button is not locked, and the
	// server decides.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	scriptOff(b)
	b.open(s.URL + "/app/accounts")
	if eval[bool](b, `document.querySelector('form[data-resolve="facebook"] button').disabled`) {
		t.Fatal("Mark resolved is locked without script")
	}
	b.submitAndWait(`form[data-resolve="facebook"] button`)
	if got := b.text(".notice"); got != "Marked resolved: the account is healthy again." || !strings.Contains(b.text("#acct-facebook"), "healthy") {
		t.Fatalf("after resolving: %q\n%s", got, b.text("#acct-facebook"))
	}
	// Resolved meanwhile (in another tab): pressing it again says so on
	// the accounts page.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	b.open(s.URL + "/app/accounts")
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	action := eval[string](b, `document.querySelector('form[data-resolve="facebook"]').getAttribute("action")`)
	if code, _, _ := c.post(action, nil); code != 303 {
		t.Fatalf("resolving in the other tab: %d", code)
	}
	b.submitAndWait(`form[data-resolve="facebook"] button`)
	if h, p := b.text("h1"), b.text(".problem"); h != "Accounts" || p != "No resolvable challenge on this account" {
		t.Fatalf("resolving twice: h1 %q, problem %q", h, p)
	}
	onlyStatus(t, console, "409", "/resolve")

	// The address: a link to the new one, which changes it once opened
	// and confirmed there.
	b.open(s.URL + "/app/account")
	b.do(setValue("#email", "new@example.com"))
	b.submitAndWait(`form[action="/app/account"] button`)
	if got := b.text("#main"); !strings.Contains(got, "A link is on its way to new@example.com") {
		t.Fatalf("after asking: %s", got)
	}
	msgs := smtp.WaitFor(1, 20*time.Second)
	var link string
	for _, m := range msgs {
		if m.To[0] == "new@example.com" {
			if i := strings.Index(m.Body, s.URL+"/app/account/confirm/"); i >= 0 {
				link = strings.Fields(m.Body[i:])[0]
			}
		}
	}
	if link == "" {
		t.Fatalf("no confirmation link to the new address: %+v", msgs)
	}
	b.open(link)
	b.submitAndWait(`form[action="/app/account/confirm"] button`)
	if h := b.text("h1"); h != "Address changed" || !strings.Contains(b.text("main"), "new@example.com") {
		t.Fatalf("after confirming: %s", b.text("main"))
	}
	b.open(s.URL + "/app/account")
	if got := b.text("#ad-h + p"); got != "Sign-in links and alerts go to new@example.com." {
		t.Fatalf("the account page says %q", got)
	}
	noConsole(t, console, "the account")
}

// onlyStatus fails t unless all the tab logged since the last look is
// the browser's line about the page's own status (a refused form's),
// which it logs as an error.
func onlyStatus(t *testing.T, c *walkLog, status, path string) {
	t.Helper()
	for _, m := range c.take() {
		if !strings.Contains(m, "status of "+status) || !strings.Contains(m, path) {
			t.Errorf("logged %s", m)
		}
	}
}
