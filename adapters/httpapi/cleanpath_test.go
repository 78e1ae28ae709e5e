package httpapi

import "testing"

// A path with a doubled slash or a dot segment is no route: with a valid
// key it is 404 not_found in the documented body, with the rate headers,
// where the mux would have redirected in HTML.
func TestUncleanPathIsNoRoute(t *testing.T) {
	api := New(Config{Logger: quietLog}, Deps{Keys: readKeys, Limiter: unlimited{}})
	for _, target := range []string{"/api/v1//me", "/api/v1/./me", "/api/v1/keywords/../me", "/api/v1/keywords//"} {
		rec := respond(api, "GET", target, "Bearer svc_api_read", nil)
		if rec.Code != 404 || !jsonHasCode(rec.Body.Bytes(), "not_found") || rec.Header().Get("X-RateLimit-Limit") == "" {
			t.Errorf("GET %s: %d %q, want 404 not_found with the rate headers", target, rec.Code, rec.Body.String())
		}
	}
}
