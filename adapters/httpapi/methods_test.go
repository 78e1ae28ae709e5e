package httpapi

import "testing"

// A method no route of a known /api/v1 path takes is 400
// invalid_request whatever the method, as docs/decisions.md says, not
// only for the common ones: an unknown path stays 404 not_found.
func TestAnyWrongMethodOnAKnownPath(t *testing.T) {
	api := New(Config{Logger: quietLog}, Deps{Keys: readKeys, Limiter: unlimited{}})
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"PROPFIND", "/api/v1/keywords", 400, "invalid_request"},
		{"TRACE", "/api/v1/me", 400, "invalid_request"},
		{"CONNECT", "/api/v1/matches/m1", 400, "invalid_request"},
		{"QUERY", "/api/v1/webhooks/w1/deliveries/d1/retry", 400, "invalid_request"},
		{"PROPFIND", "/api/v1/nothing", 404, "not_found"},
		{"GET", "/api/v1/keywords/", 404, "not_found"},
	} {
		rec := respond(api, c.method, c.path, "Bearer svc_api_read", nil)
		if rec.Code != c.status || !jsonHasCode(rec.Body.Bytes(), c.code) {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, rec.Code, rec.Body, c.status, c.code)
		}
	}
}
