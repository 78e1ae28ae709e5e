package main

import (
	"strings"
	"testing"
)

// The protocol headers of the public API reach a client through the
// whole server: Location on a 201, WWW-Authenticate on a 401, Allow on a
// wrong method, and a JSON body read as JSON whatever its media type.
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

	// A JSON body is read as JSON whatever its Content-Type says: a
	// browser's fetch of a string sends text/plain, curl -d a form type.
	s.call("POST", "/api/v1/keywords", a.full, `{"phrase":"other","platform":"facebook"}`, "Content-Type", "text/plain").want(t, 201, "")
	if l := s.call("GET", "/api/v1/keywords", a.full, nil).JSON(t)["data"].([]any); len(l) != 2 {
		t.Fatalf("%d phrases stored, want both", len(l))
	}
}
