package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// dashboardLimit is EARSHOT_RATE_LIMIT_PER_MINUTE's default, which the
// dashboard's writes share with the API's per-key limit.
const dashboardLimit = 60

// burst sends n same-origin posts to path as c's owner and returns how
// many went through and how many were refused, checking each refusal
// says when to try again.
func burst(t *testing.T, c *browserless, path string, n int) (passed, refused int) {
	t.Helper()
	for range n {
		code, _, body := c.post(path, nil)
		if code != http.StatusTooManyRequests {
			passed++
			continue
		}
		refused++
		if !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "try again in") ||
			!strings.Contains(body, "at most 60 changes and sends a minute") {
			t.Fatalf("refusal page of %s:\n%s", path, body)
		}
	}
	return passed, refused
}

// 150 test pings from one dashboard session: at most the limit reach the
// registered receiver, the rest are refused with 429 and the page's
// message, and reading the inbox is still allowed.
func TestDashboardTestPingsLimited(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	created, rcv := hook(t, s, s.APIKey, map[string]any{"platforms": []string{"x"}, "min_score": 0})
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))

	passed, refused := burst(t, c, "/app/webhooks/"+created["id"].(string)+"/test", 150)
	// A ping is sent before its answer: every one let through has arrived.
	got := len(rcv.Messages())
	if passed < 1 || passed > dashboardLimit || refused != 150-passed || got != passed {
		t.Fatalf("%d pings let through, %d refused, %d received; want at most %d through and received", passed, refused, got, dashboardLimit)
	}
	if code, _, body := c.get("/app/"); code != 200 || !strings.Contains(body, `<h1>Inbox</h1>`) {
		t.Fatalf("the inbox past the limit: %d", code)
	}
	t.Logf("%d of 150 pings sent, %d refused", passed, refused)
}

// 150 redeliveries of a delivered message: at most the limit are queued
// and reach the receiver, the rest are refused with the page's message.
func TestDashboardRedeliverLimited(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	created, rcv := hook(t, s, s.APIKey, map[string]any{"platforms": []string{"x"}, "min_score": 0})
	hid := created["id"].(string)
	s.ingest(s.IngestKey, "x", xPost("r1", "ada", "acme for sale?"))
	first := rcv.WaitFor(1, 20*time.Second)
	if len(first) != 1 {
		t.Fatal("the match's message never came")
	}
	waitDeliveries(t, s, s.APIKey, hid, func(l []any) bool {
		return len(l) == 1 && l[0].(map[string]any)["status"] == "delivered"
	})
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))

	// A redelivery still queued answers 409, sends nothing and spends
	// nothing: only the ones queued (303) reach the receiver and count.
	path := "/app/webhooks/" + hid + "/deliveries/" + first[0].DeliveryID + "/redeliver"
	queued, refused := 0, 0
	for range 150 {
		code, _, body := c.post(path, nil)
		switch code {
		case http.StatusSeeOther:
			queued++
		case http.StatusTooManyRequests:
			refused++
			if !strings.Contains(body, "try again in") {
				t.Fatalf("refusal page:\n%s", body)
			}
		}
	}
	if queued < 1 || queued > dashboardLimit {
		t.Fatalf("%d redeliveries queued, %d refused: want at most %d queued", queued, refused, dashboardLimit)
	}
	rcv.WaitFor(1+queued, 20*time.Second)
	if got := len(rcv.Messages()) - 1; got != queued {
		t.Fatalf("%d redeliveries received, %d queued", got, queued)
	}
	if code, _, _ := c.get("/app/webhooks/" + hid); code != 200 {
		t.Fatalf("the webhook's page past the limit: %d", code)
	}
	t.Logf("%d of 150 redeliveries queued, %d refused", queued, refused)
}
