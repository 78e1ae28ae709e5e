package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// The spec's bounds of the public API, checked just inside and just
// outside over the real binary: a body of 4 KB is read, one byte more is
// 413; limit 1 and 100 and min_score 0 and 100 are read, past them 400;
// an Idempotency-Key of 1 and of 64 characters is taken.
func TestOutsideAPIBounds(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=3")
	a := newTenant(t, s, "a@example.com")

	// A body of exactly 4096 bytes is read (and refused for what it
	// says, not for its size); 4097 bytes is 413.
	body := func(n int) string {
		head, tail := `{"phrase":"`, `","platform":"x"}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	if b := body(4096); len(b) != 4096 {
		t.Fatalf("body of %d bytes", len(b))
	}
	_, msg := s.call("POST", "/api/v1/keywords", a.full, body(4096)).want(t, 400, "invalid_parameter").errorCode(t)
	if !strings.Contains(msg, "phrase") {
		t.Fatalf("a 4096-byte body refused with %q, want the phrase's length named", msg)
	}
	s.call("POST", "/api/v1/keywords", a.full, body(4097)).want(t, 413, "payload_too_large")

	for _, q := range []string{"limit=1", "limit=100", "min_score=0", "min_score=100", "limit=1&min_score=100&platform=reddit"} {
		r := s.call("GET", "/api/v1/matches?"+q, a.readOnly, nil).want(t, 200, "").JSON(t)
		if _, ok := r["nextCursor"]; !ok || r["data"] == nil {
			t.Fatalf("%s: %v, want data and nextCursor (null)", q, r)
		}
	}

	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "one", "platform": "x"}, "Idempotency-Key", "k").want(t, 201, "")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "one", "platform": "x"}, "Idempotency-Key", "k").want(t, 200, "")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "two", "platform": "x"}, "Idempotency-Key", "a_b.c:d-E9").want(t, 201, "")
}

// Every refusal of the public API, whatever refuses it, answers the
// documented body {error: {code, message}} as JSON and carries the rate
// headers (spec 7 and 8: "every response carries X-RateLimit-Limit and
// X-RateLimit-Remaining").
func TestOutsideAPIRefusalsInTheErrorBody(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=40")
	a := newTenant(t, s, "a@example.com")
	big := `{"phrase":"` + strings.Repeat("a", 5000) + `","platform":"x"}`
	for _, c := range []struct {
		method, path, key string
		body              any
		status            int
		code              string
	}{
		{"GET", "/api/v1/me", "", nil, 401, "unauthorized"},
		{"GET", "/api/v1/me", "svc_api_nope", nil, 401, "unauthorized"},
		{"POST", "/api/v1/keywords", a.readOnly, map[string]any{"phrase": "p", "platform": "x"}, 403, "forbidden"},
		{"GET", "/api/v1/webhooks", a.full, nil, 403, "plan_limit"},
		{"GET", "/api/v1/keywords/nope", a.full, nil, 404, "not_found"},
		{"GET", "/api/v1/matches/nope", a.full, nil, 404, "not_found"},
		{"GET", "/api/v1/nowhere", a.full, nil, 404, "not_found"},
		{"DELETE", "/api/v1/me", a.full, nil, 400, "invalid_request"},
		{"POST", "/api/v1/keywords", a.full, `{`, 400, "invalid_json"},
		{"GET", "/api/v1/matches?limit=0", a.full, nil, 400, "invalid_parameter"},
		{"POST", "/api/v1/keywords", a.full, big, 413, "payload_too_large"},
	} {
		r := s.call(c.method, c.path, c.key, c.body).want(t, c.status, c.code)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
		if r.Header.Get("X-RateLimit-Limit") != "40" || r.Header.Get("X-RateLimit-Remaining") == "" {
			t.Errorf("%s %s (%d): rate headers %q %q", c.method, c.path, c.status,
				r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
	}
	// The helper endpoints answer their refusals in the same body.
	s.call("GET", "/phrases?platform=x", "", nil).want(t, 401, "unauthorized")
	s.call("GET", "/phrases?platform=myspace", a.ingest, nil).want(t, 400, "invalid_parameter")
	s.call("DELETE", "/ingest", a.ingest, nil).want(t, 400, "invalid_request")
	s.call("POST", "/ingest", a.ingest, `{`).want(t, 400, "invalid_json")
	s.call("GET", "/proxy", a.ingest, nil).want(t, 503, "service_unavailable")
}

// HEAD is served wherever GET is: GET's status and headers, no body.
func TestOutsideAPIHead(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a := newTenant(t, s, "a@example.com")
	for _, path := range []string{"/api/v1/me", "/api/v1/keywords", "/api/v1/matches?limit=5"} {
		get := s.call("GET", path, a.readOnly, nil).want(t, 200, "")
		head := s.call("HEAD", path, a.readOnly, nil)
		if head.Status != 200 || len(head.Body) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") ||
			head.Header.Get("X-RateLimit-Limit") == "" {
			t.Fatalf("HEAD %s: %d %v %q; GET: %v", path, head.Status, head.Header, head.Body, get.Header)
		}
	}
	if r := s.call("HEAD", "/api/v1/keywords/nope", a.readOnly, nil); r.Status != 404 || len(r.Body) != 0 {
		t.Fatalf("HEAD of a missing phrase: %d %q", r.Status, r.Body)
	}
}

// A request header is read up to 64 KB (and the 4 KB net/http adds): a
// key with a header just inside is answered; one past the bound is 431
// before any route, and the server keeps serving. The refused request
// goes on a connection of its own: on a kept-alive one, net/http reads
// the next request's first 4 KB before it sets the bound.
func TestOutsideHeaderBound(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a := newTenant(t, s, "a@example.com")
	s.call("GET", "/api/v1/me", a.readOnly, nil, "X-Pad", strings.Repeat("p", 60<<10)).want(t, 200, "")

	req, _ := http.NewRequest("GET", s.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+a.readOnly)
	req.Header.Set("X-Pad", strings.Repeat("p", 70<<10))
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: client.Timeout}
	resp, err := fresh.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a header of 70 KB: %d %s", resp.StatusCode, buf.Bytes())
	}
	s.call("GET", "/api/v1/me", a.readOnly, nil).want(t, 200, "")
}
