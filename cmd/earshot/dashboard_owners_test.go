package main

// Two owners on one dashboard, against the real binary: neither reaches
// the other's settings.

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// One owner's session never reads or changes another's keys, webhooks,
// deliveries, accounts or notifications, by an id of the other's in the
// address, on any route of the dashboard's second part.
func TestDashboardOwnersKeptApart(t *testing.T) {
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
