package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Test sends count against one bucket per owner, shared by all its
// keys, at EARSHOT_RATE_LIMIT_PER_MINUTE: three keys of one owner,
// each well within its own limit, together send the owner's 6 and the
// seventh is 429 rate_limited with Retry-After, X-RateLimit-Limit and
// X-RateLimit-Remaining: 0, and nothing is sent. A send refused as 404
// spends nothing of the bucket, and the key that met the owner's limit
// still reads.
func TestOutsideOutboundBucketPerOwner(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=6",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1")
	a := newTenant(t, s, "a@example.com")
	keys := []string{a.full,
		s.mustAdmin("key", "create", "--owner", a.id, "--name", "k2", "--scopes", "read,webhooks"),
		s.mustAdmin("key", "create", "--owner", a.id, "--name", "k3", "--scopes", "read,webhooks"),
	}
	created, rcv := hook(t, s, keys[0], map[string]any{})
	testPath := "/api/v1/webhooks/" + created["id"].(string) + "/test"

	s.call("POST", "/api/v1/webhooks/nope/test", keys[1], nil).want(t, 404, "not_found")
	for i, key := range []string{keys[0], keys[0], keys[1], keys[1], keys[2], keys[2]} {
		if d := dataOf(t, s.call("POST", testPath, key, nil).want(t, 200, "")); d["delivered"] != true {
			t.Fatalf("send %d: %v", i+1, d)
		}
	}
	r := s.call("POST", testPath, keys[2], nil).want(t, 429, "rate_limited")
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 ||
		r.Header.Get("X-RateLimit-Limit") != "6" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the owner's seventh send: %v", r.Header)
	}
	if n := len(rcv.WaitFor(6, 5*time.Second)); n != 6 {
		t.Fatalf("%d pings sent, want 6", n)
	}
	s.call("GET", "/api/v1/me", keys[2], nil).want(t, 200, "")
	if n := len(rcv.Messages()); n != 6 {
		t.Fatalf("%d pings sent after the refusal, want 6", n)
	}
}

// A redelivery or replay the service refuses sends nothing, so it spends
// nothing of the owner's bucket either: a retry of a test ping (400) and
// a replay of a switched-off webhook (409) leave the owner its sends.
func TestOutsideOutboundRefusalsSpendNothing(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=3",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1")
	a := newTenant(t, s, "a@example.com")
	k2 := s.mustAdmin("key", "create", "--owner", a.id, "--name", "k2", "--scopes", "read,webhooks")
	k3 := s.mustAdmin("key", "create", "--owner", a.id, "--name", "k3", "--scopes", "read,webhooks")
	created, _ := hook(t, s, a.full, map[string]any{})
	base := "/api/v1/webhooks/" + created["id"].(string)

	s.call("POST", base+"/test", a.full, nil).want(t, 200, "") // the owner's first send
	ping := listOf(t, s.call("GET", base+"/deliveries", k3, nil).want(t, 200, ""))[0].(map[string]any)["id"].(string)
	s.call("POST", base+"/deliveries/"+ping+"/retry", k2, nil).want(t, 400, "invalid_request")
	s.call("PATCH", base, k2, map[string]any{"active": false}).want(t, 200, "")
	s.call("POST", base+"/replay", k2, map[string]any{"from": time.Now().Add(-time.Hour).UnixMilli()}).want(t, 409, "conflict")
	s.call("POST", base+"/test", k3, nil).want(t, 200, "") // the owner's second
	s.call("POST", base+"/test", k3, nil).want(t, 200, "") // and third
	_, msg := s.call("POST", base+"/test", a.full, nil).want(t, 429, "rate_limited").errorCode(t)
	if !strings.Contains(msg, "owner's limit") {
		t.Fatalf("the owner's fourth send refused with %q", msg)
	}
}
