package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// onlyReader hides strings.Reader's Len, so net/http sends the body
// chunked, without a Content-Length, as a streaming client does.
type onlyReader struct{ io.Reader }

// A body over 4 KB is refused 413 on every route, before the route, the
// scope and the plan (the order in docs/decisions.md), whether the client
// announced its length or sent it chunked: the edge cannot tell a chunked
// body's size from its headers, so it must read up to the limit itself.
func TestBodyOverLimitChunked(t *testing.T) {
	keys := keyOf{
		"svc_api_read":     {ID: "k1", OwnerID: "o1", Kind: core.APIKey},
		"svc_api_webhooks": {ID: "k2", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead, core.ScopeWebhooks}},
	}
	// No webhook service: the webhook routes answer plan_limit to a
	// body within the limit.
	api := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Keys: keys, Limiter: unlimited{}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	big := `{"phrase":"` + strings.Repeat("a", maxBody) + `"}`
	for _, c := range []struct{ method, path, key string }{
		{"POST", "/api/v1/keywords", "svc_api_read"},      // scope: the key is read only
		{"POST", "/api/v1/webhooks", "svc_api_webhooks"},  // plan: no webhooks
		{"GET", "/api/v1/webhooks", "svc_api_webhooks"},   // a route that reads no body
		{"DELETE", "/api/v1/keywords/p1", "svc_api_read"}, // nor does this one
		{"DELETE", "/api/v1/nowhere", "svc_api_read"},     // no route
	} {
		for _, chunked := range []bool{false, true} {
			var body io.Reader = strings.NewReader(big)
			if chunked {
				body = onlyReader{body}
			}
			req, _ := http.NewRequest(c.method, srv.URL+c.path, body)
			req.Header.Set("Authorization", "Bearer "+c.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !jsonHasCode(got, "payload_too_large") || resp.Header.Get("X-RateLimit-Limit") == "" {
				t.Errorf("%s %s, chunked %v: %d %s, want 413 payload_too_large with the rate headers", c.method, c.path, chunked, resp.StatusCode, got)
			}
		}
	}
	// A chunked body within the limit still reaches the route whole.
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/webhooks", onlyReader{strings.NewReader(`{"url":"https://example.com/h"}`)})
	req.Header.Set("Authorization", "Bearer svc_api_webhooks")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !jsonHasCode(got, "plan_limit") {
		t.Errorf("a small chunked body: %d %s, want 403 plan_limit", resp.StatusCode, got)
	}
}
