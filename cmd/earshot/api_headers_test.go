package main

import (
	"strings"
	"testing"
)

// The protocol headers of the public API reach a client through the
// whole server: Location on a 201, WWW-Authenticate on a 401, Allow on a
// wrong method, and a JSON body sent as another media type refused
// before it is read (nothing is stored).
func TestAPIProtocolHeaders(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a := newTenant(t, s, "a@example.com")

	r := s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	loc := r.Header.Get("Location")
	if id := dataOf(t, r)["id"].(string); loc != "/api/v1/keywords/"+id {
		t.Fatalf("Location %q for phrase %s", loc, id)
	}
	if got := dataOf(t, s.call("GET", loc, a.readOnly, nil).want(t, 200, "")); got["phrase"] != "acme" {
		t.Fatalf("GET Location: %v", got)
	}

	for _, key := range []string{"", "svc_api_" + strings.Repeat("A", 43)} {
		if r := s.call("GET", "/api/v1/me", key, nil).want(t, 401, "unauthorized"); r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("401 with %q: WWW-Authenticate %q", key, r.Header.Get("WWW-Authenticate"))
		}
	}

	if r := s.call("PUT", "/api/v1/keywords", a.full, nil).want(t, 400, "invalid_request"); r.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Fatalf("PUT /api/v1/keywords: Allow %q", r.Header.Get("Allow"))
	}

	s.call("POST", "/api/v1/keywords", a.full, `{"phrase":"other","platform":"facebook"}`, "Content-Type", "text/plain").want(t, 400, "invalid_request")
	s.call("POST", "/ingest", a.ingest, `{"platform":"x","posts":[]}`, "Content-Type", "application/x-www-form-urlencoded").want(t, 400, "invalid_request")
	if l := s.call("GET", "/api/v1/keywords", a.full, nil).JSON(t)["data"].([]any); len(l) != 1 {
		t.Fatalf("%d phrases stored, want the one created as JSON", len(l))
	}
}
