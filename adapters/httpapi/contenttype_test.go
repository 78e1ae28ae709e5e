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

// A JSON body sent under another media type (a form, plain text) is
// refused 400 invalid_request before it is read, on the public API and
// on POST /ingest alike: a client that sends a form by mistake learns
// that, rather than having its bytes read as JSON. JSON under any of its
// names (charset, case, a +json type) and a body with no Content-Type at
// all are read as before.
func TestWrongContentTypeRefused(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	all := core.Key{ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead, core.ScopeWritePhrases, core.ScopeWebhooks}}
	p := &probe{}
	api := New(Config{Logger: quiet}, Deps{Keys: keyOf{"svc_api_all": all}, Phrases: p, Matches: probeMatches{p}, Webhooks: probeWebhooks{p}, Limiter: unlimited{}})
	helper := NewHelper(HelperConfig{Limiter: unlimited{}, Logger: quiet},
		keyOf{"svc_ingest_one": {ID: "i1", OwnerID: "o1", Kind: core.IngestKey}}, &helperProbe{}, &helperProbe{})
	for _, c := range []struct {
		method, path, key, body string
		ok                      int
	}{
		{"POST", "/api/v1/keywords", "svc_api_all", `{"phrase":"acme","platform":"x"}`, 201},
		{"PATCH", "/api/v1/keywords/known", "svc_api_all", `{"status":"paused"}`, 200},
		{"POST", "/api/v1/webhooks", "svc_api_all", `{"url":"https://hooks.example.com/in"}`, 201},
		{"POST", "/ingest", "svc_ingest_one", oneBatch, 200},
	} {
		var h = http.Handler(api)
		if !strings.HasPrefix(c.path, "/api/") {
			h = helper
		}
		for ct, want := range map[string]int{
			"text/plain":                        400,
			"application/x-www-form-urlencoded": 400,
			"multipart/form-data; boundary=x":   400,
			"application/json; charset=utf-8":   c.ok,
			"APPLICATION/JSON":                  c.ok,
			"application/merge-patch+json":      c.ok,
			"":                                  c.ok,
		} {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+c.key)
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want || want == 400 && !jsonHasCode(rec.Body.Bytes(), "invalid_request") {
				t.Errorf("%s %s as %q: %d %s, want %d", c.method, c.path, ct, rec.Code, rec.Body, want)
			}
		}
	}
}
