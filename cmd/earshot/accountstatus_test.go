package main

import (
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/mailtest"
)

// POST /account-status on the real binary: the view, two owners kept
// apart, keys checked, and the alert emailed once through the configured
// SMTP server.
func TestAccountStatusEndToEnd(t *testing.T) {
	t.Parallel()
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com")
	a, b := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	checkpoint := map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}

	s.call("POST", "/account-status", a.full, checkpoint).want(t, 401, "unauthorized")
	s.call("POST", "/account-status", "", checkpoint).want(t, 401, "unauthorized")
	s.call("POST", "/account-status", a.ingest, map[string]any{"platform": "facebook"}).want(t, 400, "invalid_parameter")
	s.call("POST", "/account-status", a.ingest, []any{1}).want(t, 400, "invalid_json")
	v := s.call("POST", "/account-status", a.ingest, checkpoint).want(t, 200, "").JSON(t)
	if v["platform"] != "facebook" || v["state"] != "action_required" || v["issue"] != "checkpointed" ||
		v["action"] != "open_challenge" || v["requiresAction"] != true || v["accountId"] == nil {
		t.Fatalf("view %v", v)
	}
	// The same report again: the same view, no second email.
	s.call("POST", "/account-status", a.ingest, checkpoint).want(t, 200, "")
	// A healthy answer does not clear the challenge.
	again := s.call("POST", "/account-status", a.ingest, map[string]any{"platform": "facebook", "status": 200}).want(t, 200, "").JSON(t)
	if again["issue"] != "checkpointed" || again["accountId"] != v["accountId"] {
		t.Fatalf("after a healthy answer: %v", again)
	}
	vb := s.call("POST", "/account-status", b.ingest, map[string]any{"platform": "facebook", "status": 200}).want(t, 200, "").JSON(t)
	if vb["state"] != "healthy" || vb["issue"] != nil || vb["accountId"] == v["accountId"] {
		t.Fatalf("b's view %v (a's account %v)", vb, v["accountId"])
	}
	me := dataOf(t, s.call("GET", "/api/v1/me", a.full, nil))
	if u := me["usage"].(map[string]any)["accounts"].(map[string]any); u["facebook"] != 1.0 {
		t.Fatalf("usage.accounts after a report: %v", u)
	}

	smtp.WaitFor(1, 10*time.Second)
	// b's account checkpointed after every report of a's: its email is
	// sent after any a wrong second one would have been (emails go out
	// in the order their notifications were stored).
	s.call("POST", "/account-status", b.ingest, checkpoint).want(t, 200, "")
	msgs := smtp.WaitFor(2, 10*time.Second)
	if len(msgs) != 2 || msgs[0].To[0] != "a@example.com" || !strings.Contains(msgs[0].Subject, "Your facebook account needs you") ||
		msgs[1].To[0] != "b@example.com" {
		t.Fatalf("%d emails: %+v", len(msgs), msgs)
	}
	// No site address is configured: links are made under the address
	// the server bound, known only once it listens.
	if want := "Dashboard: " + s.URL + "/app/"; !strings.Contains(msgs[0].Body, want) {
		t.Fatalf("email body lacks %q:\n%s", want, msgs[0].Body)
	}
}
