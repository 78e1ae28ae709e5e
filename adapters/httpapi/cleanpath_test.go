package httpapi

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A path with a doubled slash or a dot segment is no route: with a valid
// key it is 404 not_found in the documented body, with the rate headers,
// where the mux would have redirected in HTML.
func TestUncleanPathIsNoRoute(t *testing.T) {
	keys := keyOf{"svc_api_read": {ID: "k1", OwnerID: "o1", Kind: core.APIKey}}
	api := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Keys: keys, Limiter: unlimited{}})
	for _, target := range []string{"/api/v1//me", "/api/v1/./me", "/api/v1/keywords/../me", "/api/v1/keywords//"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Authorization", "Bearer svc_api_read")
		api.ServeHTTP(rec, req)
		if rec.Code != 404 || !jsonHasCode(rec.Body.Bytes(), "not_found") || rec.Header().Get("X-RateLimit-Limit") == "" {
			t.Errorf("GET %s: %d %q, want 404 not_found with the rate headers", target, rec.Code, rec.Body.String())
		}
	}
}
