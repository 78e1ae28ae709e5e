package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A webhook message checked as a receiver written from the spec alone
// would check it (section 5.8 and 6): the headers by their names, the
// signature recomputed here over "<timestamp>.<raw body>" with the secret
// as returned, a timestamp within 300 seconds; a match goes only to the
// webhooks whose min_score and platforms want it; a redirect is not
// followed and an answer later than the wait is a timeout, both reported
// by the test send; failed test sends never switch a webhook off.
func TestOutsideWebhookMessages(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=4", "EARSHOT_WEBHOOK_TIMEOUT=300ms")
	a := newTenant(t, s, "a@example.com")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")

	wants, rcv := hook(t, s, a.full, map[string]any{})
	other, _ := hook(t, s, a.full, map[string]any{"min_score": 0, "platforms": []string{"facebook"}})

	// A receiver that sends every request elsewhere, and one that
	// answers after the wait; their shape is net/http's own answers.
	var followed atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { followed.Add(1) }))
	t.Cleanup(elsewhere.Close)
	redirect := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/in", http.StatusFound))
	t.Cleanup(redirect.Close)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // before slow.Close, which waits for it
	redirID := dataOf(t, s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": redirect.URL + "/hook"}).want(t, 201, ""))["id"].(string)
	slowID := dataOf(t, s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": slow.URL + "/hook"}).want(t, 201, ""))["id"].(string)

	s.ingest(a.ingest, "x", ingestPost("1", "Can anyone recommend an alternative to Acme CRM? Looking to buy this week, budget approved."))
	msg := rcv.WaitFor(1, 10*time.Second)[0]
	h := msg.Header
	ts := h.Get("X-Service-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(float64(time.Now().Unix()-sec)) > 300 {
		t.Fatalf("X-Service-Timestamp %q", ts)
	}
	mac := hmac.New(sha256.New, []byte(wants["secret"].(string)))
	mac.Write([]byte(ts + "." + string(msg.Body)))
	if want := "v1=" + hex.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(h.Get("X-Service-Signature")), []byte(want)) {
		t.Fatalf("X-Service-Signature %q, want %q", h.Get("X-Service-Signature"), want)
	}
	var body map[string]any
	if err := json.Unmarshal(msg.Body, &body); err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Service-Event") != "match.created" || body["type"] != "match.created" || h.Get("X-Service-Delivery") != body["id"] ||
		len(body) != 4 || body["data"] == nil {
		t.Fatalf("message %v\n%s", h, msg.Body)
	}
	if _, err := time.Parse(time.RFC3339, body["createdAt"].(string)); err != nil {
		t.Fatalf("createdAt: %v", err)
	}
	// The facebook-only webhook's deliveries were queued, if at all, with
	// the score that sent the message above.
	if l := listOf(t, s.call("GET", "/api/v1/webhooks/"+other["id"].(string)+"/deliveries", a.full, nil).want(t, 200, "")); len(l) != 0 {
		t.Fatalf("a facebook-only webhook got an x match: %v", l)
	}

	for range 5 {
		d := dataOf(t, s.call("POST", "/api/v1/webhooks/"+redirID+"/test", a.full, nil).want(t, 200, ""))
		if d["delivered"] != false || d["error"] != "redirect" {
			t.Fatalf("a test send to a redirect: %v", d)
		}
	}
	if n := followed.Load(); n != 0 {
		t.Fatalf("a redirect was followed %d times", n)
	}
	if d := dataOf(t, s.call("POST", "/api/v1/webhooks/"+slowID+"/test", a.full, nil).want(t, 200, "")); d["delivered"] != false || d["error"] != "timeout" {
		t.Fatalf("a test send past the wait: %v", d)
	}
	for _, w := range listOf(t, s.call("GET", "/api/v1/webhooks", a.full, nil).want(t, 200, "")) {
		if w := w.(map[string]any); w["active"] != true || w["disabledReason"] != nil {
			t.Fatalf("failed test sends switched a webhook off: %v", w)
		}
	}
}

// The delivery log holds the last 20 deliveries, newest first.
func TestOutsideDeliveryLogLastTwenty(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1")
	a := newTenant(t, s, "a@example.com")
	created, _ := hook(t, s, a.full, map[string]any{})
	id := created["id"].(string)
	var first string
	for i := range 21 {
		s.call("POST", "/api/v1/webhooks/"+id+"/test", a.full, nil).want(t, 200, "")
		if i == 0 {
			first = listOf(t, s.call("GET", "/api/v1/webhooks/"+id+"/deliveries", a.full, nil))[0].(map[string]any)["id"].(string)
		}
	}
	l := listOf(t, s.call("GET", "/api/v1/webhooks/"+id+"/deliveries", a.full, nil).want(t, 200, ""))
	if len(l) != 20 {
		t.Fatalf("%d entries in the log, want 20", len(l))
	}
	last := math.Inf(1)
	for _, e := range l {
		e := e.(map[string]any)
		if e["id"] == first {
			t.Fatal("the oldest of 21 deliveries is still in the log")
		}
		if at := e["createdAt"].(float64); at >= last {
			t.Fatalf("not newest first: %v after %v", at, last)
		} else {
			last = at
		}
	}
}
